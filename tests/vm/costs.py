"""What each VM test costs (seconds of wall time, setup + call, in a ``make test`` run at
commit 957e48f: two guests beside the tests without a VM), and the order that makes the two
guests finish together.

pytest-xdist's ``worksteal`` gives the first guest the first half of the collection and the
other the rest, and a guest that runs out takes the tail of the other's queue. In collection
order the long tests bunched on one guest (1,183 s of tests against 1,094 s): sorted longest
first and dealt A B B A, each guest starts with half of the long work and ends on short
tests, which stealing can even out. A test not listed counts as ``DEFAULT_S``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

DEFAULT_S = 20

WALL_S: dict[str, int] = {
    "test_preflight.py::test_preflight_refuses_from_the_kernel_tables_without_blkid_or_wipefs": 131,
    "test_routine.py::test_scheduled_windows_resume_and_alerts_arrive": 124,
    "test_lifecycle.py::test_prepare_create_mount_stop_assemble_delete_leaves_the_disks_as_they_started": 107,
    "test_wizards.py::test_fail_remove_readd_member_through_the_tui": 96,
    "test_replacement.py::test_qualify_fail_replace_check_retire_on_a_raid1_of_nvme": 95,
    "test_engines.py::test_ansible_builds_raid10_then_changes_nothing": 87,
    "test_hosts_ssh.py::test_report_over_the_guests_sshd_equals_the_local_report": 81,
    "test_wizards.py::test_create_raid10_lvm_ext4_through_the_tui": 78,
    "test_benchmark.py::test_benchmark_applied_end_to_end": 74,
    "test_report.py::test_report_and_tui_match_the_kernel_during_and_after_the_sync": 72,
    "test_capture_replay.py::test_capture_replay_gives_the_live_findings": 65,
    "test_sync_model.py::test_raid10_resync_is_held_at_the_limit_and_lasts_the_forecast": 51,
    "test_wizards.py::test_failing_step_stops_the_plan": 46,
    "test_md_events_wake.py::test_sysfs_attributes_wake_the_event_source": 45,
    "test_geometry.py::test_plan_geometry_is_the_kernels_optimal_io[raid10-f2-4]": 42,
    "test_wizards.py::test_preflight_refuses_mounted_device_and_running_member": 37,
    "test_wear.py::test_bitmap_saves_the_rebuild_of_a_readded_member": 36,
    "test_geometry.py::test_plan_geometry_is_the_kernels_optimal_io[raid6-ls-4]": 34,
    "test_readd_forecast.py::test_raid10_re_add_with_a_bitmap_resyncs_the_dirty_chunks": 33,
    "test_geometry.py::test_plan_geometry_is_the_kernels_optimal_io[raid5-ls-4]": 33,
    "test_sync_watch.py::test_check_and_its_mismatch_count": 32,
    "test_bitmap_recovery_progress.py::test_bitmap_recovery_progress_in_sysfs_and_mdstat": 32,
    "test_session_monitor.py::test_monitor_records_every_sync_exactly_by_uuid": 31,
    "test_geometry.py::test_plan_geometry_is_the_kernels_optimal_io[raid10-n2-4]": 30,
    "test_wear.py::test_initial_sync_writes_one_capacity_to_the_target": 29,
    "test_wear_partitions.py::test_a_sync_on_partitions_holds_only_its_own_partitions_writes": 28,
    "test_wizards.py::test_dry_run_and_non_root_execute_nothing": 28,
    "test_sync_records.py::test_a_failed_member_without_spare_is_no_rebuild_and_a_readd_is_one": 28,
    "test_readd_forecast.py::test_raid10_re_add_without_a_bitmap_is_a_full_recovery": 28,
    "test_audit.py::test_raid5_tuning_fixes_make_their_findings_disappear": 28,
    "test_geometry.py::test_plan_geometry_is_the_kernels_optimal_io[raid10-n2-3]": 26,
    "test_geometry.py::test_plan_geometry_is_the_kernels_optimal_io[raid10-o2-4]": 26,
    "test_audit.py::test_healthy_ext4_on_lvm_on_raid10_has_no_warnings": 26,
    "test_sync_records.py::test_a_delayed_sync_waits_and_each_array_keeps_its_own_bytes": 26,
    "test_audit.py::test_wrong_ext4_stride_on_lvm_on_raid10_is_fixed_by_tune2fs": 25,
    "test_lvm_raid.py::test_a_lost_pv_the_lvs_health_its_repair_plan_and_the_recorded_recovery": 24,
    "test_lvm_raid.py::test_raid1_lv_sync_in_report_and_its_check_plan": 23,
    "test_stack.py::test_grow_raid5_from_3_to_4_reshapes": 23,
    "test_stack.py::test_lvm_with_ext4_and_xfs_on_raid10": 23,
    "test_md_kinds.py::test_journal_ppl_linear_raid0_level_change_and_reshape_match_sysfs": 23,
    "test_audit.py::test_partitions_at_65535_sectors_are_found_and_1mib_ones_are_not": 20,
    "test_recovery.py::test_check_counts_mismatches": 19,
    "test_recovery.py::test_readd_without_bitmap_is_a_full_recovery": 18,
    "test_consequences.py::test_frozen_stops_a_degraded_rebuild_and_idle_lets_md_restart_it": 17,
    "test_recovery.py::test_spare_takes_over": 16,
    "test_recovery.py::test_fail_remove_add_recovers": 16,
    "test_stack.py::test_member_hot_unplugged_mid_sync": 15,
    "test_imsm.py::test_imsm_container_is_not_a_filesystem_target": 15,
    "test_sync_model.py::test_raid5_creation_recovers_the_last_member_in_the_forecast_time": 15,
    "test_recovery.py::test_readd_with_bitmap_rebuilds_only_what_changed": 15,
    "test_audit.py::test_xfs_stripe_mismatch_offers_no_fix": 15,
    "test_consequences.py::test_degraded_raid6_fail_typed_then_refused_and_rebuilding_re_add_refused": 13,
    "test_geometry.py::test_stale_pv_label_from_a_bigger_array_is_flagged": 12,
    "test_smart_log_io.py::test_report_io_rates_match_diskstats_while_dd_writes": 11,
    "test_engines.py::test_node_exporter_serves_raidman_sync_metrics": 11,
    "test_sync_watch.py::test_raid5_initial_sync_is_watched": 11,
    "test_lifecycle.py::test_a_removed_member_shows_its_events_behind_the_array": 10,
    "test_sync_watch.py::test_raid5_grow_reshape_is_watched": 10,
    "test_smart_log_io.py::test_failed_member_shows_md_disk_failure_line": 10,
    "test_levels.py::test_create_and_initial_sync[raid10]": 9,
    "test_levels.py::test_create_and_initial_sync[raid5]": 9,
    "test_levels.py::test_create_and_initial_sync[raid6]": 9,
    "test_sync_watch.py::test_raid10_recovery_is_watched": 8,
    "test_stack.py::test_virtio_disk_with_usb_bridge_topology": 6,
    "test_sync_watch.py::test_boost_raises_and_later_restores_limits": 6,
    "test_levels.py::test_create_and_initial_sync[raid0]": 5,
    "test_levels.py::test_create_and_initial_sync[raid1]": 5,
    "test_smart_log_io.py::test_short_self_test_plan_on_nvme": 5,
    "test_harness.py::test_guest_python_sees_the_repo_and_md": 3,
    "test_harness.py::test_agent_runs_commands_in_the_guest_kernel": 2,
    "test_harness.py::test_call_forks_the_preloaded_agent": 1,
    "test_harness.py::test_qmp_answers": 0,
    "test_harness.py::test_disks_are_present_with_their_topology": 0,
}

T = TypeVar("T")


def cost(nodeid: str) -> int:
    """``nodeid``'s measured seconds (``tests/vm/`` relative), else ``DEFAULT_S``."""
    return WALL_S.get(nodeid.split("tests/vm/", 1)[-1], DEFAULT_S)


def two_queues(items: Sequence[T], nodeid: Callable[[T], str]) -> list[T]:
    """Longest first, dealt into two halves, the halves one after the other: what
    worksteal splits in the middle (the first guest gets ``len // 2`` tests: the shorter half
    by count goes first)."""
    ranked = sorted(items, key=lambda i: (-cost(nodeid(i)), nodeid(i)))
    # dealt A B B A, A B B A, ...: neither half takes the larger of every pair
    a = [t for k, t in enumerate(ranked) if k % 4 in (0, 3)]
    b = [t for k, t in enumerate(ranked) if k % 4 in (1, 2)]
    return a + b if len(a) <= len(b) else b + a
