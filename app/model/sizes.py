"""Byte counts as people read them: the one ``human_bytes`` (the TUI, reports and plans reach it
through :mod:`app.format`; the model's SMART lines use it here, below ``app.format``)."""

from __future__ import annotations

_IEC = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
_SI = ("B", "kB", "MB", "GB", "TB", "PB")


def human_bytes(n: int | None, *, trim: bool = False, decimal: bool = False) -> str:
    """IEC size with one decimal ("465.8 GiB"); whole numbers below 1 KiB ("512 B"); "?" if unknown.
    ``trim``: a whole number of its unit without the decimal ("256 MiB", as plans say sizes).
    ``decimal``: SI units, three significant digits ("512 GB", "33.2 TB"), as disk vendors count."""
    if n is None:
        return "?"
    base, units = (1000, _SI) if decimal else (1024, _IEC)
    value = float(n)
    for unit in units:
        if abs(value) < base or unit == units[-1]:
            if unit == "B" or (trim and value == int(value)):
                return f"{int(value)} {unit}"
            if decimal:
                return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
            return f"{value:.1f} {unit}"
        value /= base
    raise AssertionError("unreachable")


TB = 10**12  # a maker's terabyte: workload ratings and TBW are in these


def per_year(tb: float | None) -> str:
    """A measured yearly volume given in makers' TB, said in the app's units: "132.9 TiB/yr"."""
    return "?" if tb is None else f"{human_bytes(round(tb * TB))}/yr"


def rated_per_year(tb: float) -> str:
    """A maker's workload rating as written on its datasheet, its IEC figure beside it (as a TBW
    rating is): "180 TB/yr (163.7 TiB/yr)"."""
    return f"{tb:g} TB/yr ({per_year(tb)})"
