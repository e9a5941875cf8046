"""The slots' common cgroup weighs as many tasks as there are CPUs; each slot keeps the default weight."""

import os

import pytest

from codea1.sandbox import cgroups


def test_parent_group_weighs_the_cpus_and_slots_weigh_alike():
    group = cgroups.SlotCgroup.create(f"share-test-{os.getpid()}", 256 << 20, 8)
    if group is None:
        pytest.skip("no writable cgroup hierarchy here")
    try:
        cpus = len(os.sched_getaffinity(0))
        if group.version == 1:
            cpu = next(d for d in group.dirs if d.parts[-3] == "cpu")
            assert int((cpu / "cpu.shares").read_text()) == 1024
            assert int((cpu.parent / "cpu.shares").read_text()) == 1024 * cpus
        else:
            [d] = group.dirs
            assert int((d / "cpu.weight").read_text()) == 100
            assert int((d.parent / "cpu.weight").read_text()) == min(10000, 100 * cpus)
    finally:
        group.close()
