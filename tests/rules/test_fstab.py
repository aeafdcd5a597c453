"""fstab and discard items of issue 12, from article 000 (/work/shared/seeds/000_*.txt):
"Best Practice wäre in der /etc/fstab die Nutzung der UUID" (md names change: md127/md126), and
"Ein periodisches Absetzen des TRIM-Befehls fstrim per cron-Job ist dem Mounten eines (ext4-)
Filesystems mit der discard-Option vorzuziehen"."""

from __future__ import annotations

from dataclasses import replace

from app.model.devices import CryptMapping, Machine
from app.rules import AuditInputs, Finding, audit
from app.rules.fstab import fstab_entries
from tests.rules.machines import Stack


def _fs_on_md() -> Machine:
    m = Stack().machine()
    fs = replace(m.filesystems[0], device="md0", uuid="0f6c1a0e-1111-2222-3333-444455556666")
    return replace(m, pvs=(), vgs=(), lvs=(), filesystems=(fs,), edges=m.edges[:-1])


def _codes(m: Machine, inputs: AuditInputs, code: str) -> list[Finding]:
    return [f for f in audit(m, inputs) if f.code == code]


def test_fstab_parser_skips_comments_and_short_lines() -> None:
    text = "# /dev/md0 /x ext4\n/dev/md127 /srv ext4 defaults,noatime 0 2\nbad line\n"
    assert fstab_entries(text) == [("/dev/md127", "/srv", "ext4", "defaults,noatime")]


def test_md_kernel_name_in_fstab_is_advice_with_the_uuid_line() -> None:
    m = _fs_on_md()
    by_name = AuditInputs(fstab_text="/dev/md0 /srv ext4 defaults 0 2\n")
    [f] = _codes(m, by_name, "fstab-md-by-name")
    assert f.device == "md0" and "md126" in f.detail
    assert "UUID=0f6c1a0e-1111-2222-3333-444455556666 /srv ext4 defaults" in f.detail
    by_link = AuditInputs(fstab_text="/dev/md/evo /srv ext4 defaults 0 2\n")
    assert _codes(m, by_link, "fstab-md-by-name")
    by_uuid = AuditInputs(
        fstab_text="UUID=0f6c1a0e-1111-2222-3333-444455556666 /srv ext4 defaults\n"
    )
    assert not _codes(m, by_uuid, "fstab-md-by-name")


def test_discard_option_is_seen() -> None:
    """With -o discard the fstrim.timer warning does not claim the filesystem goes untrimmed;
    the option itself gets article 000's advice (weekly fstrim preferred)."""
    m = _fs_on_md()
    base = AuditInputs(fstrim_timer="inactive", discard_max_bytes={"md0": 2147450880})
    assert _codes(m, base, "fstrim-timer-inactive")
    online = replace(base, fstab_text="UUID=x /srv ext4 defaults,discard 0 2\n")
    assert not _codes(m, online, "fstrim-timer-inactive")
    [f] = _codes(m, online, "fstab-discard-option")
    assert "periodic fstrim" in f.detail and "article" not in f.detail.lower()


def test_dm_crypt_without_allow_discards_names_its_crypttab_line() -> None:
    m = Stack().machine()
    crypt = CryptMapping("luks-data", "dm-1", "md0", "LUKS2")
    m = replace(m, crypts=(crypt,), edges=(*m.edges, ("md0", "dm-1")))
    inputs = AuditInputs(
        discard_max_bytes={"md0": 2147450880, "dm-1": 0},
        crypttab_text="luks-data UUID=abcd none luks\n",
    )
    [f] = [x for x in _codes(m, inputs, "discard-blocked") if x.device == "dm-1"]
    assert "allow_discards" in f.detail
    assert "(now: luks-data UUID=abcd none luks)" in f.detail
    assert "cryptsetup refresh --allow-discards --persistent luks-data" in f.detail


def test_dmsetup_crypt_table_parser() -> None:
    """The crypt target line as documented in the kernel's dm-crypt.rst (no corpus sample)."""
    import pytest

    from app.parsers.dmsetup import parse_crypt_table
    from app.parsers.errors import ParseError

    t = parse_crypt_table(
        "0 1044480 crypt aes-xts-plain64 :64:logon:cryptsetup:abc-d0 0 9:127 32768 1 "
        "allow_discards\n"
    )
    assert (t.device, t.offset_sectors, t.allow_discards) == ("9:127", 32768, True)
    assert not parse_crypt_table("0 8 crypt aes-cbc-essiv:sha256 - 0 8:2 4096\n").allow_discards
    for bad in ("", "0 8 linear 8:2 0\n", "0 8 crypt c k 0 8:2 ²\n", "a\nb\n"):
        with pytest.raises(ParseError):
            parse_crypt_table(bad)


def test_luks_data_offset_against_the_md_chunk() -> None:
    from app.parsers.dmsetup import CryptTable

    m = Stack(chunk=32 * 1024).machine()
    crypt = CryptMapping("luks-data", "dm-1", "md0", "LUKS2")
    m = replace(m, crypts=(crypt,), edges=(*m.edges, ("md0", "dm-1")))
    aligned = AuditInputs(crypt_tables={"dm-1": CryptTable("9:0", 32768, ())})  # 16 MiB
    assert not _codes(m, aligned, "luks-data-offset")
    odd = AuditInputs(crypt_tables={"dm-1": CryptTable("9:0", 4100, ())})  # 2 MiB + 2 KiB
    [f] = _codes(m, odd, "luks-data-offset")
    assert f.severity == "warning" and "32 KiB chunk" in f.detail and f.fix is None
