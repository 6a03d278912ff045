#!/usr/bin/env bash
# Installs the accessibility check the `cairn ui` tests run (scripts/a11y/axe_check.py):
# Selenium and axe-selenium-python from PyPI, for the python3 on PATH. axe-selenium-python
# ships axe-core's script inside the package, so nothing is fetched when the check runs; the
# browser is the chromium and chromedriver of scripts/deps/chromium.sh.
# Idempotent: pip runs only when either package is missing. Runs as root.
set -euo pipefail

if python3 -c 'import selenium, axe_selenium_python' >/dev/null 2>&1; then
    exit 0
fi
if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "axe: installing pip"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-pip
fi
echo "axe: installing selenium and axe-selenium-python with pip"
# Debian's own python3 refuses system-wide pip installs (PEP 668); the flag is only passed
# when this pip knows it, so older pips keep working.
flags=(--quiet)
if python3 -m pip install --help 2>/dev/null | grep -q -- '--break-system-packages'; then
    flags+=(--break-system-packages)
fi
python3 -m pip install "${flags[@]}" 'selenium>=4.10,<5' 'axe-selenium-python==2.1.6'

# Fail loudly here rather than in the tests if the install did not take.
python3 -c 'import selenium, axe_selenium_python'
