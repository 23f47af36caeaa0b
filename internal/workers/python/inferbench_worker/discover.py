"""discover finds seed-style benchmarks in a Python file without importing it (by its syntax tree):

- top-level functions named run_* or benchmark_*;
- classes that define setup_model and measure_latency (or measure_time_to_first_token), not
  abstract (no @abstractmethod on those methods, not named ModelBenchmark).

A function whose body names one of those classes is the entry point of the classes' own runner
(it builds a runner and writes files) and is not listed; nor is a run_* or benchmark_* function
that another function of the file calls (a helper, such as run_training_benchmark(callbacks)
called by the benchmark comparing its runs).
"""

import ast

CLASS_METHODS = ("setup_model", "measure_latency", "measure_time_to_first_token", "cleanup_model")


def discover_file(path):
    """discover_file returns {"file", "functions": [...], "classes": [...]} for path."""
    with open(path, encoding="utf-8") as f:
        src = f.read()
    tree = ast.parse(src, filename=path)
    funcs, classes = [], []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith(("run_", "benchmark_")):
            funcs.append({"name": node.name, "line": node.lineno,
                          "doc": _first_line(ast.get_docstring(node)),
                          "params": [a.arg for a in node.args.args]})
        elif isinstance(node, ast.ClassDef):
            methods = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
            if "setup_model" not in methods:
                continue
            if "measure_latency" not in methods and "measure_time_to_first_token" not in methods:
                continue
            if node.name == "ModelBenchmark" or any(_abstract(m) for m in methods.values()):
                continue
            classes.append({"name": node.name, "line": node.lineno,
                            "doc": _first_line(ast.get_docstring(node)),
                            "methods": [m for m in CLASS_METHODS if m in methods]})
    called = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            called |= {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call)
                       and isinstance(n.func, ast.Name) and n.func.id != node.name}
    funcs = [f for f in funcs if f["name"] not in called]
    if classes:
        names = {c["name"] for c in classes}
        entry = set()
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(n, ast.Name) and n.id in names for n in ast.walk(node)):
                entry.add(node.name)
        funcs = [f for f in funcs if f["name"] not in entry]
    return {"file": path, "functions": funcs, "classes": classes}


def _abstract(fn):
    for d in fn.decorator_list:
        name = d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")
        if name == "abstractmethod":
            return True
    return False


def _first_line(doc):
    return (doc or "").strip().split("\n")[0]
