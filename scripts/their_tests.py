"""Run tensorboardX's or torch's own tests with npsummary in place of their writers.

    python scripts/their_tests.py tensorboardX /path/to/tensorboardX/tests [pytest args]
    python scripts/their_tests.py torch /path/to/pytorch/test [pytest args]
    python scripts/their_tests.py tbparse /path/to/tbparse/tests [pytest args]
    python scripts/their_tests.py --unpatched tensorboardX /path/to/tensorboardX/tests

The given folder (and the ``examples`` folder beside it, when there is one: tensorboardX's
``test_openvino_graph`` reads a model from there) is copied into a temporary directory (nothing is
written into it or into this repository), with a ``conftest.py`` that calls ``npsummary.patch()``
before any test module is imported, so ``tensorboardX.SummaryWriter``,
``torch.utils.tensorboard.SummaryWriter`` and both ``summary`` modules' builders resolve to
npsummary's. The tests that reach into the library's private objects (or test code npsummary does
not replace) are deselected; the list is below and in docs/MIGRATION.md ("Their own tests").
``--unpatched`` runs the same selection against the library itself (no ``npsummary.patch()``), for
the reference figures. Run it in an environment with the library installed (torch: ``pip install
torch==2.13.0`` with a constraints file).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# node id -> why it is not run against npsummary.
EXCLUDED = {
    "tensorboardX": {
        "tests/event_file_writer_test.py": "tensorboardX's EventFileWriter class",
        "tests/record_writer_test.py": "tensorboardX's RecordWriter class",
        "tests/test_record_writer.py": "tensorboardX's S3RecordWriter / GCSRecordWriter classes",
        "tests/test_crc32c.py": "tensorboardX's crc32c functions",
        "tests/test_numpy.py": "tensorboardX.x2num",
        "tests/test_x2num_coverage.py": "tensorboardX.x2num",
        "tests/test_chainer_np.py": "tensorboardX.x2num with chainer",
        "tests/test_utils.py": "tensorboardX.utils (_prepare_video, convert_to_HWC)",
        "tests/test_utils_coverage.py": "tensorboardX.utils",
        "tests/test_lint.py": "runs a linter over tensorboardX's source",
        "tests/test_writer.py::WriterTest::test_flush": "file_writer.event_writer._ev_writer",
        "tests/test_writer.py::WriterTest::test_flush_after_close": "file_writer.event_writer",
        "tests/test_writer.py::WriterTest::test_flush_timer_is_long_so_data_is_not_there": (
            "file_writer.event_writer (passes only because that attribute is missing)"
        ),
        "tests/test_writer.py::WriterTest::test_writer_with_default_metadata": (
            "mocks tensorboardX.event_file_writer.EventFileWriter.add_event"
        ),
        "tests/test_multiprocess_write.py::GlobalWriterTest::test_flush": (
            "file_writer.event_writer._ev_writer"
        ),
        "tests/test_multiprocess_write.py::GlobalWriterTest::test_flush_after_close": (
            "file_writer.event_writer._ev_writer"
        ),
        "tests/test_multiprocess_write.py::GlobalWriterTest::"
        "test_flush_timer_is_long_so_data_is_not_there": (
            "file_writer.event_writer (passes only because that attribute is missing)"
        ),
        "tests/test_multiprocess_write.py::GlobalWriterTest::test_writer": (
            "file_writer.event_writer._ev_writer._file_name"
        ),
    },
    "torch": {
        "test/test_tensorboard.py::TestTensorBoardPyTorchNumpy::test_pytorch_np": "make_np",
        "test/test_tensorboard.py::TestTensorBoardPyTorchNumpy::test_pytorch_autograd_np": (
            "make_np"
        ),
        "test/test_tensorboard.py::TestTensorBoardUtils": "_utils, summary._calc_scale_factor",
        "test/test_tensorboard.py::TestTensorBoardSummary::test_uint8_image": (
            "summary._calc_scale_factor"
        ),
        "test/test_tensorboard.py::TestTensorBoardSummary::test_float32_image": (
            "summary._calc_scale_factor"
        ),
        "test/test_tensorboard.py::TestTensorBoardNumpy": "make_np",
        "test/test_tensorboard.py::TestTensorBoardPytorchGraph::test_pytorch_graph": (
            "_pytorch_graph.graph"
        ),
        "test/test_tensorboard.py::TestTensorBoardPytorchGraph::test_nested_nn_squential": (
            "_pytorch_graph.graph"
        ),
    },
    # tbparse's tests write logs with torch's and tensorboardX's writers (here npsummary's) and
    # read them back with tbparse, comparing with logs written by TensorFlow where it is there.
    "tbparse": {},
}

CONFTEST = """\
import npsummary

npsummary.patch()
"""


def main(argv: list[str]) -> int:
    unpatched = bool(argv) and argv[0] == "--unpatched"
    if unpatched:
        argv = argv[1:]
    if len(argv) < 2 or argv[0] not in EXCLUDED:
        print(__doc__, file=sys.stderr)
        return 2
    library, source = argv[0], Path(argv[1]).resolve()
    with tempfile.TemporaryDirectory(prefix="their_tests_") as tmp:
        root = Path(tmp)
        shutil.copytree(source, root / source.name, symlinks=True)
        # tensorboardX's test_openvino_graph reads examples/mobilenetv2.xml from the checkout.
        if (source.parent / "examples").is_dir():
            shutil.copytree(source.parent / "examples", root / "examples", symlinks=True)
        if not unpatched:
            # Patch before any test module is imported: in the copied folder's own conftest.py
            # when it has one (tbparse's declares pytest_plugins, which pytest accepts only in
            # a top-level conftest), else in one above it.
            theirs = root / source.name / "conftest.py"
            if theirs.exists():
                theirs.write_text(CONFTEST + theirs.read_text())
            else:
                (root / "conftest.py").write_text(CONFTEST)
        # Whole files are not even imported; single tests are deselected (prefix match).
        deselect = [
            f"--deselect={node}" if "::" in node else f"--ignore={node}"
            for node in EXCLUDED[library]
        ]
        command = [
            sys.executable, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider",
            "-p", "no:hypothesispytest", "--rootdir", str(root), *deselect, *argv[2:],
            source.name,
        ]  # fmt: skip
        return subprocess.call(command, cwd=root)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
