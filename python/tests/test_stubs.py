"""The stubs name exactly what the compiled module has."""

import ast
import inspect
from pathlib import Path

import riffpe._native as native

STUB = Path(__file__).resolve().parents[1] / "riffpe" / "_native.pyi"


def _stub_members():
    tree = ast.parse(STUB.read_text())
    members = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    names.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
            members[node.name] = names - {"__new__"}
    return members


def test_stubs_match_module():
    stubs = _stub_members()
    public = {n for n in dir(native) if isinstance(getattr(native, n), type)}
    assert set(stubs) == public
    functions = {
        node.name for node in ast.parse(STUB.read_text()).body if isinstance(node, ast.FunctionDef)
    }
    builtins = {n for n in dir(native) if inspect.isbuiltin(getattr(native, n))}
    assert functions == builtins
    for name, members in stubs.items():
        cls = getattr(native, name)
        actual = {m for m in vars(cls) if not m.startswith("__")}
        assert members == actual, name
