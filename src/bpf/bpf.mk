# The BPF object of `--call-graph bpf-defer`, built with clang against the
# running kernel's BTF (CO-RE): vmlinux.h is generated into the build dir,
# never committed, and the object is embedded as a bpftool skeleton.
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
BPF_CLANG ?= clang
BPF_OUT := $(BUILD)/bpf
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

$(BPF_OUT)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@

$(BPF_OUT)/defer.bpf.o: src/bpf/defer.bpf.c src/bpf/sframe.bpf.h \
		src/bpf/defer-shared.h $(BPF_OUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(BPF_CLANG) -target bpf -O2 -g -mcpu=v3 -D__TARGET_ARCH_x86 \
		-Wall -Werror -I$(BPF_OUT) -Isrc -c $< -o $@

$(BPF_OUT)/defer.skel.h: $(BPF_OUT)/defer.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name sfp_defer_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/src/bpf/loader.o $(BUILD)/src/bpf/user-vmas.o: $(BPF_OUT)/defer.skel.h

# The off-CPU kernel sums beside the tracepoint path (offsum.h): no kfunc,
# so it loads where bpf-defer's task_work is refused.
$(BPF_OUT)/offsum.bpf.o: src/bpf/offsum.bpf.c src/bpf/offsum-shared.h \
		$(BPF_OUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(BPF_CLANG) -target bpf -O2 -g -mcpu=v3 -D__TARGET_ARCH_x86 \
		-Wall -Werror -I$(BPF_OUT) -Isrc -c $< -o $@

$(BPF_OUT)/offsum.skel.h: $(BPF_OUT)/offsum.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name sfp_offsum_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/src/bpf/offsum.o: $(BPF_OUT)/offsum.skel.h

# The tests' probe of what the kernel's verifier takes (tests/cli/
# test-subr.sh's bpf_defer_expected loads it with bpftool).
TEST_BPF_OBJS := $(BUILD)/tests/progs/task-work-probe.bpf.o
$(BUILD)/tests/progs/task-work-probe.bpf.o: tests/progs/task-work-probe.bpf.c \
		$(BPF_OUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPF_CLANG) -target bpf -O2 -g -mcpu=v3 -D__TARGET_ARCH_x86 \
		-Wall -Werror -I$(BPF_OUT) -c $< -o $@

# defer.bpf.c with syscall programs that run its walks and its task_work
# callback through BPF_PROG_TEST_RUN (tests/unit/test-bpf-walk.c): built
# by the same rule as the object record loads, embedded as a skeleton.
$(BUILD)/tests/progs/bpf-walk.bpf.o: tests/progs/bpf-walk.bpf.c \
		src/bpf/defer.bpf.c src/bpf/sframe.bpf.h src/bpf/defer-shared.h \
		$(BPF_OUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPF_CLANG) -target bpf -O2 -g -mcpu=v3 -D__TARGET_ARCH_x86 \
		-Wall -Werror -I$(BPF_OUT) -Isrc -c $< -o $@

$(BUILD)/tests/progs/bpf-walk.skel.h: $(BUILD)/tests/progs/bpf-walk.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name sfp_walk_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/tests/test-bpf-walk: $(BUILD)/tests/progs/bpf-walk.skel.h
$(BUILD)/tests/test-bpf-walk: ALL_CFLAGS += -I$(BUILD)/tests/progs

# Deep stacks in the sframe mode (deepcopy.h): the stack past the
# snapshot copied at the sample, for the threads that need it; no kfunc.
$(BPF_OUT)/deepcopy.bpf.o: src/bpf/deepcopy.bpf.c src/bpf/deepcopy-shared.h \
		$(BPF_OUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(BPF_CLANG) -target bpf -O2 -g -mcpu=v3 -D__TARGET_ARCH_x86 \
		-Wall -Werror -I$(BPF_OUT) -Isrc -c $< -o $@

$(BPF_OUT)/deepcopy.skel.h: $(BPF_OUT)/deepcopy.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name sfp_deepcopy_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/src/bpf/deepcopy.o: $(BPF_OUT)/deepcopy.skel.h
