// SPDX-License-Identifier: MIT
/*
 * The agent's labels: container ids from cgroup v2 paths as docker,
 * containerd (CRI), CRI-O, podman and systemd lay them out, and the
 * service name of a cgroup.  The paths are those /proc/PID/cgroup shows
 * ("0::" stripped) under each engine's systemd and cgroupfs drivers.
 */
#include "agent/agent.h"
#include "test.h"

#define ID "3f6b2c1d9e8a7f605142332415061728394a5b6c7d8e9f0a1b2c3d4e5f607182"

static void expect_id(const char *path, const char *want)
{
	char id[80] = "";
	bool got = agent_container_id(path, id, sizeof(id));

	if (!want) {
		if (got)
			sfp_test_fail_at(__FILE__, __LINE__,
					 "%s: no container expected, got %s",
					 path, id);
		return;
	}
	if (!got || strcmp(id, want))
		sfp_test_fail_at(__FILE__, __LINE__, "%s: want %s, got %s",
				 path, want, got ? id : "(none)");
}

TEST(agent_container_docker)
{
	expect_id("/system.slice/docker-" ID ".scope", ID);
	expect_id("/docker/" ID, ID);
	/* docker in docker: the innermost */
	expect_id("/docker/" ID "/docker/"
		  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
}

TEST(agent_container_kubernetes)
{
	expect_id("/kubepods.slice/kubepods-burstable.slice/"
		  "kubepods-burstable-pod7c1e2a4b_5d6e_4f80_9a1b_2c3d4e5f6a7b.slice/"
		  "cri-containerd-" ID ".scope", ID);
	expect_id("/kubepods/besteffort/pod7c1e2a4b-5d6e-4f80-9a1b-2c3d4e5f6a7b/"
		  ID, ID);
	expect_id("/kubepods.slice/kubepods-pod7c1e2a4b_5d6e_4f80_9a1b_2c3d4e5f6a7b.slice/"
		  "crio-" ID ".scope", ID);
	/* CRI-O's monitor is not the container */
	expect_id("/kubepods.slice/kubepods-pod7c1e2a4b_5d6e_4f80_9a1b_2c3d4e5f6a7b.slice/"
		  "crio-conmon-" ID ".scope", NULL);
	/* the pod's own slice has no container id */
	expect_id("/kubepods.slice/kubepods-burstable.slice/"
		  "kubepods-burstable-pod7c1e2a4b_5d6e_4f80_9a1b_2c3d4e5f6a7b.slice",
		  NULL);
}

TEST(agent_container_podman)
{
	expect_id("/machine.slice/libpod-" ID ".scope/container", ID);
	expect_id("/user.slice/user-1000.slice/user@1000.service/user.slice/"
		  "libpod-" ID ".scope", ID);
	expect_id("/machine.slice/libpod-conmon-" ID ".scope", NULL);
}

TEST(agent_container_none)
{
	expect_id("/", NULL);
	expect_id("", NULL);
	expect_id("/system.slice/nginx.service", NULL);
	expect_id("/user.slice/user-1000.slice/session-3.scope", NULL);
	expect_id("/init.scope", NULL);
	/* 63 and 65 hex digits: not an id */
	expect_id("/docker/" "3f6b2c1d9e8a7f605142332415061728394a5b6c7d8e9f0a1b2c3d4e5f60718",
		  NULL);
	expect_id("/docker/" ID "0", NULL);
	expect_id("/system.slice/docker-" "3f6b2c1d9e8a7f60514233241506172g"
		  "394a5b6c7d8e9f0a1b2c3d4e5f607182.scope", NULL);
}

TEST(agent_container_case)
{
	/* ids are reported in lowercase, as the engines print them */
	expect_id("/docker/3F6B2C1D9E8A7F605142332415061728394A5B6C7D8E9F0A1B2C3D4E5F607182",
		  ID);
}

TEST(agent_container_small_buffer)
{
	char id[64];

	ASSERT_FALSE(agent_container_id("/docker/" ID, id, sizeof(id)));
}

TEST(agent_cgroup_service_names)
{
	char s[64];

	agent_cgroup_service("/system.slice/nginx.service", s, sizeof(s));
	ASSERT_STREQ(s, "nginx");
	agent_cgroup_service("/user.slice/user-1000.slice/session-3.scope", s,
			     sizeof(s));
	ASSERT_STREQ(s, "session-3");
	agent_cgroup_service("/kubepods.slice/kubepods-besteffort.slice", s,
			     sizeof(s));
	ASSERT_STREQ(s, "kubepods-besteffort");
	agent_cgroup_service("/", s, sizeof(s));
	ASSERT_STREQ(s, "root");
	agent_cgroup_service("/sfprof-test/worker", s, sizeof(s));
	ASSERT_STREQ(s, "worker");
}
