"""Imports the Rust extension module, turning a missing solver library into a message that
names the Debian packages to install (the wheel links IPOPT and CBC from the system; HiGHS
is built into it)."""

# Shared-library names of the system solvers the extension links, and the Debian packages
# that provide them (the -dev packages also let `pip install` build the extension).
SYSTEM_LIBRARIES = {
    "libipopt": "coinor-libipopt-dev",
    "libCbc": "coinor-libcbc-dev",
    "libCbcSolver": "coinor-libcbc-dev",
    "libCgl": "coinor-libcbc-dev",
    "libClp": "coinor-libcbc-dev",
    "libOsi": "coinor-libcbc-dev",
    "libCoinUtils": "coinor-libcbc-dev",
}


def missing_library_message(error):
    """The message for an ImportError of the extension: the library it names and the Debian
    package to install, or None when the error is not about a solver library."""
    text = str(error)
    for library, package in SYSTEM_LIBRARIES.items():
        if library in text:
            return (
                f"glassbox could not load its extension module: {text}. glassbox uses the "
                f"system's IPOPT and CBC libraries; on Debian or Ubuntu install them with "
                f"`apt-get install coinor-libipopt-dev coinor-libcbc-dev` (this one is in "
                f"{package})."
            )
    return None


def load():
    """The extension module `glassbox._native`."""
    try:
        from . import _native
    except ImportError as error:
        message = missing_library_message(error)
        if message is None:
            raise
        raise ImportError(message) from error
    return _native
