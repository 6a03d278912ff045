#!/usr/bin/env bash
# Installs the debug adapters the cairn-dap integration tests drive:
#   - debugpy (PyPI) for the python3 on PATH, used as `python3 -m debugpy.adapter`;
#   - lldb-dap from Debian's lldb-22 package;
#   - gcc, which the tests use to build their C program with debug info.
# Idempotent: each step runs only when its component is missing. Runs as root and
# assumes `apt-get update` has been run.
set -euo pipefail

apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
}

if ! command -v python3 >/dev/null 2>&1; then
    echo "debug-adapters: installing python3"
    apt_install python3
fi

if ! python3 -c 'import debugpy' >/dev/null 2>&1; then
    if ! python3 -m pip --version >/dev/null 2>&1; then
        echo "debug-adapters: installing pip"
        apt_install python3-pip
    fi
    echo "debug-adapters: installing debugpy with pip"
    # Debian's own python3 refuses system-wide pip installs (PEP 668); the flag is
    # only passed when this pip knows it, so older pips keep working.
    if python3 -m pip install --help 2>/dev/null | grep -q -- '--break-system-packages'; then
        python3 -m pip install --quiet --break-system-packages debugpy
    else
        python3 -m pip install --quiet debugpy
    fi
fi

if ! command -v lldb-dap-22 >/dev/null 2>&1 && [ ! -x /usr/lib/llvm-22/bin/lldb-dap ]; then
    echo "debug-adapters: installing lldb-22"
    apt_install lldb-22
fi

if ! command -v gcc >/dev/null 2>&1; then
    echo "debug-adapters: installing gcc"
    apt_install gcc libc6-dev
fi

# Fail loudly here rather than in the tests if something above did not take.
python3 -c 'import debugpy'
if command -v lldb-dap-22 >/dev/null 2>&1; then
    echo "debug-adapters: lldb-dap at $(command -v lldb-dap-22)"
else
    echo "debug-adapters: lldb-dap at /usr/lib/llvm-22/bin/lldb-dap"
fi
