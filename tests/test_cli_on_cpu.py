import subprocess
import sys

from codea1.cli import main


def test_help_lists_commands(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    assert "usage: codea1" in out


def test_module_entry_point_version():
    out = subprocess.run([sys.executable, "-m", "codea1", "--version"], check=False, capture_output=True, text=True)
    assert out.returncode == 0
    assert out.stdout.startswith("codea1 ")
