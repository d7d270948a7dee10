# Spack recipe for rdlm. rdlm has no published release or public address yet, so the
# recipe builds a checkout (Spack's develop workflow):
#   spack repo add <checkout>/contrib/spack
#   spack env create rdlm && spack env activate rdlm
#   spack develop --path <checkout> rdlm@=0.1.0
#   spack add rdlm@=0.1.0 +mpi ^openmpi && spack install
# Checked by tests/contrib/check_spack_package.py (label contrib): every variant maps
# to an option the top CMakeLists.txt declares.

from spack.package import *


class Rdlm(CMakePackage):
    """Fast, safe coordination for HPC programs: on-node and cross-node locks,
    reader-writer locks, counters, semaphores and barriers with fencing tokens,
    a replicated lease authority (rdlmd) and an MPI_Barrier replacement."""

    # No public home or release yet: the source is a checkout (spack develop, above).
    version("0.1.0")

    variant("ucx", default=True, description="UCX transport for cross-node objects")
    variant("verbs", default=True, description="libibverbs/librdmacm transport")
    variant("mpi", default=True, description="librdlm_mpi.so: contexts over MPI communicators")
    variant("pmpi", default=True, description="librdlm_pmpi.so: the MPI_Barrier replacement")
    variant("authority", default=True, description="the lease authority rdlmd (libraft)")
    variant("hwloc", default=True, description="topology discovery with hwloc")
    variant("pmix", default=True, description="rank and size from PMIx in standalone mode")
    variant("fortran", default=True, description="the Fortran module (use rdlm)")
    variant("python", default=True, description="the Python package (ctypes, mpi4py)")

    conflicts("+pmpi", when="~mpi", msg="the MPI_Barrier replacement needs +mpi")
    conflicts("+fortran", when="~mpi", msg="the Fortran module needs +mpi")

    depends_on("c", type="build")
    depends_on("fortran", type="build", when="+fortran")
    depends_on("cmake@3.25:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("ucx", when="+ucx")
    depends_on("rdma-core", when="+verbs")
    depends_on("mpi", when="+mpi")
    depends_on("hwloc", when="+hwloc")
    depends_on("pmix", when="+pmix")
    depends_on("libuv", when="+authority")
    depends_on("c-raft", when="+authority")
    depends_on("python@3.8:", type=("build", "run"), when="+python")
    depends_on("py-mpi4py", type="run", when="+python")
    depends_on("cmocka", type="test")

    def cmake_args(self):
        return [
            self.define_from_variant("RDLM_WITH_UCX", "ucx"),
            self.define_from_variant("RDLM_WITH_VERBS", "verbs"),
            self.define_from_variant("RDLM_WITH_MPI", "mpi"),
            self.define_from_variant("RDLM_WITH_PMPI", "pmpi"),
            self.define_from_variant("RDLM_WITH_AUTHORITY", "authority"),
            self.define_from_variant("RDLM_WITH_HWLOC", "hwloc"),
            self.define_from_variant("RDLM_WITH_PMIX", "pmix"),
            self.define_from_variant("RDLM_WITH_FORTRAN", "fortran"),
            self.define_from_variant("RDLM_WITH_PYTHON", "python"),
            self.define("RDLM_BUILD_TESTS", self.run_tests),
            self.define("RDLM_BUILD_BENCH", False),
        ]
