"""Finding the libraries. Proves: a librdlm.so that cannot be loaded gives
LibraryNotFoundError naming every place tried and how to fix it; rdlm.load(path)
overrides, and a second load of another file is refused; librdlm_mpi.so is found
beside librdlm.so; RDLM_LIBRARY is a variable the C library knows (no warning); the
package's version is the library's and the project's."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

CORE = os.environ["RDLM_LIBRARY"]  # set by ctest: the build tree's librdlm.so


def python(code, **env):
    """Run code in a fresh interpreter with env changes (None: unset)."""
    full = dict(os.environ)
    for key, value in env.items():
        if value is None:
            full.pop(key, None)
        else:
            full[key] = value
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True,
                          text=True, timeout=30)


class Loading(unittest.TestCase):
    def test_missing_library_names_what_was_tried(self):
        run = python("import rdlm; rdlm.Context()", RDLM_LIBRARY="/nonexistent/librdlm.so")
        self.assertNotEqual(run.returncode, 0)
        last = run.stderr.strip().splitlines()[-1]
        self.assertIn("LibraryNotFoundError: rdlm: cannot load librdlm.so.0", last)
        self.assertIn("/nonexistent/librdlm.so (RDLM_LIBRARY)", last)
        self.assertIn("Set RDLM_LIBRARY", last)

    def test_soname_search_is_the_fallback(self):
        run = python("import rdlm; print(rdlm.library_path())", RDLM_LIBRARY=None,
                     LD_LIBRARY_PATH=os.path.dirname(CORE))
        self.assertEqual((run.returncode, run.stdout.strip()), (0, "librdlm.so.0"),
                         run.stderr)

    def test_load_argument_overrides_and_is_loaded_once(self):
        code = ("import rdlm\n"
                f"rdlm.load({CORE!r})\n"
                "print(rdlm.library_path())\n"
                "try:\n"
                "    rdlm.load('/elsewhere/librdlm.so')\n"
                "except ValueError as e:\n"
                "    print('refused', e)\n")
        run = python(code, RDLM_LIBRARY="/nonexistent/librdlm.so")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.splitlines()[0], CORE)
        self.assertIn("refused rdlm: librdlm.so.0 is already loaded from", run.stdout)

    @unittest.skipUnless(os.environ.get("RDLM_MPI_LIBRARY"), "built without MPI")
    def test_mpi_library_beside_the_core_one(self):
        with tempfile.TemporaryDirectory() as lib:
            for src, soname in ((CORE, "librdlm.so.0"),
                                (os.environ["RDLM_MPI_LIBRARY"], "librdlm_mpi.so.0")):
                shutil.copy(src, os.path.join(lib, soname))
            code = ("import rdlm\nfrom rdlm import _library\n"
                    "rdlm.load()\n_library.load('mpi')\nprint(_library.loaded_path('mpi'))\n")
            run = python(code, RDLM_LIBRARY=os.path.join(lib, "librdlm.so.0"),
                         RDLM_MPI_LIBRARY=None)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertEqual(run.stdout.strip(), os.path.join(lib, "librdlm_mpi.so.0"))

    def test_library_variables_are_known_to_the_library(self):
        run = python("import rdlm; rdlm.Context().close()",
                     RDLM_MPI_LIBRARY="/unused/librdlm_mpi.so")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("unknown variable", run.stderr)

    def test_versions_agree(self):
        run = python("import rdlm; print(rdlm.__version__, rdlm.library_version())")
        expected = os.environ["RDLMTEST_EXPECT_VERSION"]
        self.assertEqual(run.stdout.split(), [expected, expected], run.stderr)


if __name__ == "__main__":
    unittest.main()
