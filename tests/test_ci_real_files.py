"""The real-file tests run in CI (issue 41, item 8): ``.ci/run`` points their variables at ``../shared/real/`` and
sets ``CI``; under ``CI=true`` a variable naming no file fails the test instead of skipping it."""
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REAL_FILES

ROOT = Path(__file__).resolve().parents[1]
LEADERBOARD_TEST = "tests/paper/test_published.py::test_mmmu_test_leaderboard_every_row_equals_the_source"


def _pytest(**env):
    base = {k: v for k, v in os.environ.items() if k not in (*REAL_FILES, "CI")}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", LEADERBOARD_TEST],
                          env={**base, **env}, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_a_missing_real_file_fails_in_ci_and_skips_elsewhere(tmp_path):
    missing = str(tmp_path / "leaderboard_data.json")
    outside = _pytest(MMBENCH_MMMU_LEADERBOARD="")
    assert outside.returncode == 0 and "1 skipped" in outside.stdout
    ci = _pytest(CI="true", MMBENCH_MMMU_LEADERBOARD=missing)
    assert ci.returncode == 1 and "1 error" in ci.stdout  # failed in its setup, never skipped
    assert "CI: MMBENCH_MMMU_LEADERBOARD must name the real file" in ci.stdout and repr(missing) in ci.stdout
    unset = _pytest(CI="true")
    assert unset.returncode == 1 and "it is 'unset'" in unset.stdout


def test_ci_run_points_every_variable_at_shared_real():
    text = (ROOT / ".ci" / "run").read_text()
    assert 'export CI="${CI:-true}"' in text and 'REAL="$(cd .. && pwd)/shared/real"' in text
    for var in REAL_FILES:
        assert f'export {var}="${{{var}:-$REAL/' in text
    for line in text.splitlines():  # each default names a file or folder the shared README lists
        if line.startswith("export MMBENCH_"):
            rel = line.split("$REAL/", 1)[1].rstrip('}"')
            shared = ROOT.parent / "shared" / "real"
            if shared.is_dir():
                assert (shared / rel).exists(), rel
