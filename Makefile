# raidman — every target does its own set-up on a fresh Debian machine.
#   make demo      the TUI on the simulated backend (scenario a: RAID-10 of four 850 EVO, resyncing);
#                  installs the runtime dependencies only
#   make test      the whole suite (tests/run_all.py): install, then lint, type check, import
#                  contracts and the unit/pilot/snapshot tests (on every core) BESIDE the VM
#                  tests (two guests); each phase's wall and CPU time at the end
#   make test-vm   only the real-kernel tests (QEMU + virtme-ng)
#   make bench     the benchmarks (figures printed, nothing asserted)

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# apt runs under one lock: make test installs the venv and the system packages in parallel
APT    := DEBIAN_FRONTEND=noninteractive $(SUDO) flock /tmp/raidman-apt.lock apt-get
SCENARIO ?= raid10-evo

VM_DEBS := qemu-system-x86 linux-image-amd64 busybox-static mdadm lvm2 smartmontools fio \
           e2fsprogs xfsprogs parted util-linux udev kmod

# Real engines the metrics/Ansible tests start themselves: promtool (package prometheus) and
# node_exporter; sshd (openssh-server) for the --host tests; ansible-core comes from PyPI.
TOOL_DEBS := prometheus prometheus-node-exporter openssh-server openssh-client

.PHONY: demo test test-unit test-vm lint bench system-deps vm-deps tool-deps clean snapshots

# Two stamps: the demo needs the runtime dependencies only (textual, ...); the tests and lint
# also the [test,dev] extras (pytest, mypy, ansible-core, virtme-ng, ...). $(BIN)/raidman itself
# exists after either install, so it cannot be the stamp.
RUNTIME := $(VENV)/.installed-runtime
ALL     := $(VENV)/.installed-all

$(VENV)/.venv-made:
	@$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || { $(APT) update -qq && $(APT) install -y -qq python3-venv python3-pip; }
	@[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	@touch $@

$(RUNTIME): pyproject.toml constraints.txt $(VENV)/.venv-made
	$(BIN)/pip install -q -c constraints.txt -e .
	@touch $@

$(ALL): pyproject.toml constraints.txt $(VENV)/.venv-made
	$(BIN)/pip install -q -c constraints.txt -e '.[test,dev]'
	@touch $@ $(RUNTIME)

demo: $(RUNTIME)
	$(BIN)/raidman --demo $(SCENARIO)

# System packages the VM tests need (idempotent; apt only runs when something is missing).
vm-deps:
	@missing=""; for p in $(VM_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; $(APT) update -qq && $(APT) install -y -qq $$missing; fi

# promtool, node_exporter and sshd (idempotent). The tests start their own node_exporter and sshd
# on free ports: the services the packages would start (openssh-server's is ssh.service) are
# stopped and disabled again when this target installed them.
tool-deps:
	@missing=""; for p in $(TOOL_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; $(APT) update -qq && $(APT) install -y -qq $$missing; \
	  if [ -d /run/systemd/system ]; then for p in $$missing; do \
	    s=$$p; [ $$p = openssh-server ] && s=ssh; \
	    $(SUDO) systemctl disable --now $$s.service >/dev/null 2>&1 || true; done; fi; fi

lint: $(ALL)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check app widgets backends
	$(BIN)/mypy
	$(BIN)/lint-imports

# The tests without a VM run on every core (pytest-xdist); the VM tests in VM_JOBS guests, one
# per xdist worker, each booted once (tests/vm/README.md).
JOBS    ?= auto
VM_JOBS ?= 2
export JOBS VM_JOBS

test-unit: $(ALL) tool-deps
	$(BIN)/pytest -m 'not vm' -n $(JOBS)

test-vm: $(ALL) vm-deps
	RAIDMAN_VM_REQUIRED=1 $(BIN)/pytest -m vm -n $(VM_JOBS) --dist worksteal

test:
	@$(PYTHON) tests/run_all.py

snapshots: $(ALL)
	$(BIN)/pytest tests/ui --snapshot-update

bench: $(ALL)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache vm-work
