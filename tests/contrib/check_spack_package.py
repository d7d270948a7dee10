#!/usr/bin/env python3
"""Check contrib/spack/packages/rdlm/package.py without Spack: run it against a small
stand-in for Spack's package DSL that records the variants and dependencies, then
check that
  - every variant appears in cmake_args() and every RDLM_* define there is an option
    (or a variable the build reads) of the tree's CMake files;
  - every build option of the top CMakeLists.txt (RDLM_WITH_*) has a variant;
  - cmake_args() gives ON/OFF following the spec.
usage: check_spack_package.py <source-dir>"""
import re
import sys
import types
from pathlib import Path

src = Path(sys.argv[1])
recipe = src / "contrib/spack/packages/rdlm/package.py"

calls = {"variant": {}, "depends_on": [], "conflicts": [], "version": []}


class CMakePackage:
    run_tests = False

    def define(self, name, value):
        if isinstance(value, bool):
            value = "ON" if value else "OFF"
        return f"-D{name}={value}"

    def define_from_variant(self, name, variant):
        if variant not in calls["variant"]:
            raise SystemExit(f"FAIL: cmake_args uses undeclared variant '{variant}'")
        return self.define(name, variant in self.spec_on)


def variant(name, default, description, **kw):
    calls["variant"][name] = default


dsl = types.ModuleType("spack.package")
dsl.CMakePackage = CMakePackage
dsl.variant = variant
dsl.depends_on = lambda *a, **kw: calls["depends_on"].append((a, kw))
dsl.conflicts = lambda *a, **kw: calls["conflicts"].append((a, kw))
dsl.version = lambda *a, **kw: calls["version"].append((a, kw))
dsl.license = lambda *a, **kw: None
dsl.__all__ = [n for n in vars(dsl) if not n.startswith("_")]
sys.modules["spack"] = types.ModuleType("spack")
sys.modules["spack.package"] = dsl

namespace = {}
exec(compile(recipe.read_text(), str(recipe), "exec"), namespace)
pkg = namespace["Rdlm"]()
fail = []
if not calls["version"]:
    fail.append("no version() declared")

cmake_text = "\n".join(p.read_text() for p in src.rglob("CMakeLists.txt")
                       if "build" not in p.relative_to(src).parts[0])
options = set(re.findall(r"option\((RDLM_[A-Z_]+)", cmake_text))
top_options = set(re.findall(r"option\((RDLM_WITH_[A-Z_]+)", (src / "CMakeLists.txt").read_text()))

for on in (set(calls["variant"]), set()):
    pkg.spec_on = on
    args = pkg.cmake_args()
    defines = dict(re.match(r"-D([A-Z_]+)=(.*)", a).groups() for a in args)
    for name, value in defines.items():
        if name not in options:
            fail.append(f"cmake_args sets {name}, which no CMakeLists.txt declares as an option")
    for name in top_options:
        if name not in defines:
            fail.append(f"build option {name} has no variant in the recipe")
    for v in calls["variant"]:
        hits = [n for n, val in defines.items() if n == f"RDLM_WITH_{v.upper()}"]
        if not hits:
            fail.append(f"variant '{v}' reaches no RDLM_WITH_{v.upper()} define")
        elif defines[hits[0]] != ("ON" if v in on else "OFF"):
            fail.append(f"variant '{v}': {hits[0]}={defines[hits[0]]} for spec {sorted(on)}")

fail = sorted(set(fail))
for f in fail:
    print("FAIL:", f)
if fail:
    sys.exit(1)
print(f"spack recipe: {len(calls['variant'])} variants, {len(calls['depends_on'])} "
      f"dependencies, every variant a CMake option and every option a variant")
