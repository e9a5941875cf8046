import os

# One torch thread in tests: with the sandbox busy on the other core, more threads slow things down.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
VALIDATION_PARQUET = SHARED / "data" / "codea1-val" / "validation_data_mix.parquet"
ULT_LITE = SHARED / "data" / "ult-lite" / "ULT_Lite.json"


@pytest.fixture
def validation_parquet() -> Path:
    if not VALIDATION_PARQUET.is_file():
        pytest.skip("shared validation parquet not present")
    return VALIDATION_PARQUET


@pytest.fixture
def ult_lite() -> Path:
    if not ULT_LITE.is_file():
        pytest.skip("shared ULT-Lite file not present")
    return ULT_LITE


def quiet_executor(uid_base: int, workers: int = 2):
    """A sandbox Executor with its own uid range, without the one-time isolation-level warning."""
    import warnings

    from codea1.sandbox import LocalExecutor

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return LocalExecutor(workers, uid_base=uid_base)
