#!/usr/bin/env bash
# Installs the headless browser the `cairn ui` tests drive: Debian's `chromium` and its
# WebDriver server `chromium-driver` (`chromedriver`), both from Debian's archive.
# Idempotent: nothing is installed when both commands are present. Runs as root and assumes
# `apt-get update` has been run.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    exit 0
fi
echo "chromium: installing chromium and chromium-driver"
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium chromium-driver
