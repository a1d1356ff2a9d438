"""One exactness check for two scorers' log-likelihoods: identical predictions, values within the
derived floating-point bound of ``mmbench_lib.core.numerics.logprob_tolerance`` (token count, magnitude,
dtype, network depth and width), not a fixed constant that one CPU's kernels happen to meet."""
import json
import os

from mmbench_lib.core.numerics import logprob_tolerance, network_shape
from mmbench_lib.scoring import pick

#: the longest sequence these tests score (prompt, image tokens and choices): attention sums over it
SEQ_LEN = 160


def tolerance(model, score, dtype="float32") -> float:
    depth, width = network_shape(model, SEQ_LEN)
    return logprob_tolerance(score.num_tokens, score.sum_logprob, dtype, depth, width)


def assert_same_scores(ref, eng, model, dtype="float32"):
    """Same token counts, the same prediction under both reductions, log-likelihoods within the bound."""
    assert len(ref) == len(eng)
    worst = 0.0
    for r_q, e_q in zip(ref, eng):
        assert [s.num_tokens for s in r_q] == [s.num_tokens for s in e_q]
        for r, e in zip(r_q, e_q):
            if not r.num_tokens:
                assert r.sum_logprob == e.sum_logprob == 0 and r.mean_logprob == e.mean_logprob == float("-inf")
                continue
            tol = tolerance(model, r, dtype)
            assert abs(r.sum_logprob - e.sum_logprob) <= tol, (r, e, tol)
            assert abs(r.mean_logprob - e.mean_logprob) <= tol / r.num_tokens, (r, e, tol)
            worst = max(worst, abs(r.sum_logprob - e.sum_logprob) / tol)
        for reduction in ("sum", "mean"):
            assert pick(r_q, reduction) == pick(e_q, reduction)
    if os.environ.get("MMBENCH_TOLERANCE_LOG"):  # how close the measured differences come to the bound
        with open(os.environ["MMBENCH_TOLERANCE_LOG"], "a", encoding="utf-8") as f:
            f.write(json.dumps({"test": os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0],
                                "model": type(model).__name__, "worst_fraction_of_tolerance": worst}) + "\n")


def largest_tolerance(model, scores) -> float:
    return max(tolerance(model, s) for q in scores for s in q if s.num_tokens)
