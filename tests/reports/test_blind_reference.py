"""Which published rows are the same model as a blind run (``reports.blind_reference``), and what each task declares."""
from mmbench_lib import published
from mmbench_lib.reports import blind_reference as R
from mmbench_lib.tasks.base import get_task, task_names


def test_model_names_match_across_spellings():
    same = [("lmsys/vicuna-7b-v1.5", "Vicuna-v1.5-7B"), ("meta-llama/Llama-2-7b-hf", "LLaMA2-7B"),
            ("causal:Qwen/Qwen1.5-1.8B", "Qwen1.5-1.8B"), ("01-ai/Yi-34B", "Yi-34B")]
    for ours, theirs in same:
        assert R.name_tokens(ours) == R.name_tokens(theirs), (ours, theirs)
    other = [("Qwen/Qwen1.5-7B", "Qwen-7B"), ("meta-llama/Llama-2-13b-hf", "LLaMA2-7B"),
             ("microsoft/phi-2", "Phi2-2.7B"), ("SmolLM2-135M-Instruct", "Qwen1.5-1.8B"),
             ("lmsys/vicuna-13b-v1.5", "Vicuna-v1.5-7B")]
    for ours, theirs in other:
        assert R.name_tokens(ours) != R.name_tokens(theirs), (ours, theirs)


def test_the_tasks_declare_their_column_of_the_mmstar_tables():
    declared = {n: get_task(n).blind_reference for n in task_names() if get_task(n).blind_reference}
    assert {n: r.column for n, r in declared.items()} == {"seed": "seed_image", "mmmu": "mmmu_val", "mmb": "mmb_en_dev"}
    for name, ref in declared.items():
        for t in ref.tables:
            assert t in published.list_tables() and ref.column in published.load(t).columns
        assert not ref.group or ref.group in get_task(name).groups
    assert dict(declared["mmmu"].data) == {"split": "validation"} and declared["seed"].group == "Image"
    assert R.table_label("mmstar_table2") == "MMStar paper, Table 2"


def test_a_run_on_other_data_than_the_column_is_said_so():
    mmmu, mmb = get_task("mmmu"), get_task("mmb")
    note = R._data_note(mmmu, [{"model": "SmolLM2", "manifest": {"source": "s", "split": "dev"}}])
    assert note == "SmolLM2: split 'dev', the paper's column is split 'validation' (other items)"
    assert R._data_note(mmmu, [{"model": "SmolLM2", "manifest": {"source": "s", "split": "val"}}]) == ""  # an alias
    assert R._data_note(mmb, [{"model": "m", "manifest": {"data": {"annotation_file": "x"}}}]) == ""  # loader defaults
    assert "language 'cn'" in R._data_note(mmb, [{"model": "m", "manifest": {"data": {"annotation_file": "x",
                                                                                    "language": "cn"}}}])
