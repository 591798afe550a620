"""The grammar the API accepts for durations, instants and numbers, as hypothesis strategies.

Each strategy draws a pair: what a client may send (a JSON value: text or number) and what it must read back
as, in the form the API documents (docs/decisions.md, "Wire values"):
- durations: ISO 8601 (`P1W2DT3H4M5.6S`, any case, weeks, zero or missing parts) or .NET TimeSpan
  (`[d.]h:mm:ss[.fffffff]`), to the 100 ns tick, with any number of trailing zero digits; emitted as ISO 8601
  with `D`, `H`, `M`, `S` only (weeks become days), `PT0S` for zero;
- instants: `Z` (either case), an offset (`+hh:mm` or `+hhmm`) or none (UTC), `T` (either case) or a space,
  seconds optional, fractional seconds with `.` or `,` and any number of digits (kept to the 100 ns tick of a
  .NET DateTime, 7 digits: further digits are dropped), or a date alone (midnight UTC); emitted in UTC with `Z`,
  fractional digits only when present, trailing zeros trimmed;
- numbers: a JSON integer, a JSON number with a zero fraction (`5.0`), or a string of digits (sign, leading
  zeros and surrounding white space allowed); emitted as a JSON integer.

The expected renderings are written out here independently of shared/model, so they are an oracle, not a copy.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from hypothesis import strategies as st

TICKS_PER_SECOND = 10_000_000
TICKS_PER_DAY = 86_400 * TICKS_PER_SECOND
MAX_DURATION_TICKS = timedelta.max // timedelta(microseconds=1) * 10 + 9  # the longest accepted duration
INT32_MAX = 2_147_483_647
INT32_MIN = -2_147_483_648
LAST_INSTANT = datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
FIRST_INSTANT = datetime(1, 1, 1, tzinfo=UTC)

_ISO_UNITS = (
    ("W", 7 * TICKS_PER_DAY),
    ("D", TICKS_PER_DAY),
    ("H", 3600 * TICKS_PER_SECOND),
    ("M", 60 * TICKS_PER_SECOND),
)


def canonical_duration(ticks: int) -> str:
    """The documented rendering of a duration: `P[nD][T[nH][nM][n[.f]S]]`, `PT0S` for zero."""
    days, rest = divmod(ticks, TICKS_PER_DAY)
    hours, rest = divmod(rest, 3600 * TICKS_PER_SECOND)
    minutes, rest = divmod(rest, 60 * TICKS_PER_SECOND)
    seconds, fraction = divmod(rest, TICKS_PER_SECOND)
    time = "".join(f"{n}{unit}" for n, unit in ((hours, "H"), (minutes, "M")) if n)
    if seconds or fraction:
        time += f"{seconds}" + (f".{fraction:07d}".rstrip("0") if fraction else "") + "S"
    text = (f"{days}D" if days else "") + (f"T{time}" if time else "")
    return f"P{text}" if text else "PT0S"


class Moment(NamedTuple):
    """An instant to the 100 ns tick: a UTC datetime (to the microsecond) and the tenths of a microsecond."""

    at: datetime
    tenths: int = 0


def canonical_instant(moment: Moment) -> str:
    """The documented rendering of an instant: UTC, `Z`, fractional digits (up to 7) only when present."""
    value = moment.at.astimezone(UTC)
    text = f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
    ticks = value.microsecond * 10 + moment.tenths
    if ticks:
        text += f".{ticks:07d}".rstrip("0")
    return text + "Z"


@st.composite
def _fraction(draw: st.DrawFn, digits: str) -> str:
    """A fraction of `digits` (fixed width) as sent: its significant digits then any number of zeros, or
    nothing at all when it is zero."""
    significant = digits.rstrip("0")
    if not significant and draw(st.booleans()):
        return ""
    return "." + (significant or "0") + "0" * draw(st.integers(0, max(0, 9 - len(significant))))


@st.composite
def _instant_fraction(draw: st.DrawFn, ticks: int) -> str:
    """Fractional seconds as sent (`ticks` of 100 ns), with `.` or `,`: exact, or to the tick and then any digits
    (dropped)."""
    separator = draw(st.sampled_from(".,"))
    if not ticks:
        return draw(st.sampled_from(["", separator + "0" * draw(st.integers(1, 9))]))
    if draw(st.integers(0, 3)) == 0:
        return f"{separator}{ticks:07d}" + draw(st.text("0123456789", min_size=1, max_size=3))
    significant = f"{ticks:07d}".rstrip("0")
    return separator + significant + "0" * draw(st.integers(0, 9 - len(significant)))


@st.composite
def duration_texts(draw: st.DrawFn, ticks: st.SearchStrategy[int]) -> tuple[str, int]:
    """A duration text the API accepts for a length drawn from `ticks`, in any accepted spelling, and that length."""
    total = draw(ticks)
    if draw(st.booleans()):  # .NET TimeSpan
        days, rest = divmod(total, TICKS_PER_DAY)
        hours, rest = divmod(rest, 3600 * TICKS_PER_SECOND)
        minutes, rest = divmod(rest, 60 * TICKS_PER_SECOND)
        seconds, fraction = divmod(rest, TICKS_PER_SECOND)
        text = (f"{days}." if days or draw(st.booleans()) else "") + ":".join(
            draw(st.sampled_from(["{:d}", "{:02d}"])).format(n) for n in (hours, minutes, seconds)
        )
        text += draw(_fraction(f"{fraction:07d}"))
    else:  # ISO 8601: any split of the length over weeks, days, hours, minutes and seconds
        rest, parts = total, []
        for unit, size in _ISO_UNITS:
            most = rest // size
            amount = draw(st.sampled_from([0, most]) | st.integers(0, most))
            rest -= amount * size
            if amount or draw(st.integers(0, 4)) == 0:
                parts.append(f"{amount}{unit}")
        seconds, fraction = divmod(rest, TICKS_PER_SECOND)
        date = "".join(p for p in parts if p[-1] in "WD")
        time = "".join(p for p in parts if p[-1] in "HM")
        if seconds or fraction or draw(st.booleans()) or not (date or time):
            time += f"{seconds}" + draw(_fraction(f"{fraction:07d}")) + "S"
        text = "P" + date + (f"T{time}" if time else "")
        text = draw(st.sampled_from([text, text.lower(), text.replace("T", "t")]))
    return draw(st.sampled_from(["", " "])) + text + draw(st.sampled_from(["", " ", "\n"])), total


def ticks_between(low: int, high: int) -> st.SearchStrategy[int]:
    """Lengths in ticks, most of them whole seconds or small, some anywhere in the range."""
    seconds = st.integers(-(-low // TICKS_PER_SECOND), high // TICKS_PER_SECOND).map(lambda s: s * TICKS_PER_SECOND)
    return st.one_of(
        st.sampled_from([low, high]), seconds, st.integers(low, min(high, low + 10**9)), st.integers(low, high)
    )


def _naive(value: datetime) -> datetime:
    return value.astimezone(UTC).replace(tzinfo=None)


@st.composite
def instant_texts(draw: st.DrawFn, low: datetime = FIRST_INSTANT, high: datetime = LAST_INSTANT) -> tuple[str, Moment]:
    """An instant text the API accepts for an instant in [low, high], and the instant it stands for (to the
    100 ns tick; digits beyond it are dropped, as documented)."""
    moment = draw(st.datetimes(min_value=_naive(low), max_value=_naive(high))).replace(tzinfo=UTC)
    tenths = draw(st.sampled_from([0, 0, 1, 9]) | st.integers(0, 9))
    form = draw(st.sampled_from(["Z", "z", "offset", "offset", "naive", "date"]))
    if form == "date":
        midnight = moment.replace(hour=0, minute=0, second=0, microsecond=0)
        if midnight >= low:
            return f"{midnight.year:04d}-{midnight:%m-%d}", Moment(midnight)
        form = "Z"
    offset = timedelta(minutes=draw(st.integers(-(24 * 60 - 1), 24 * 60 - 1))) if form == "offset" else timedelta()
    try:
        local = moment.replace(tzinfo=None) + offset
    except OverflowError:  # the wall time would be outside years 1-9999: that is a 400, not this grammar
        local, offset, form = moment.replace(tzinfo=None), timedelta(), "Z"
    text = f"{local.year:04d}-{local:%m-%d}" + draw(st.sampled_from(["T", "t", " "])) + f"{local:%H:%M}"
    if local.second or local.microsecond or tenths or draw(st.booleans()):
        text += f":{local:%S}" + draw(_instant_fraction(local.microsecond * 10 + tenths))
    if form in ("Z", "z"):
        text += form
    elif form == "offset":
        minutes = int(offset.total_seconds()) // 60
        sign = "-" if minutes < 0 or (minutes == 0 and draw(st.booleans())) else "+"
        hh, mm = divmod(abs(minutes), 60)
        text += sign + draw(st.sampled_from([f"{hh:02d}:{mm:02d}", f"{hh:02d}{mm:02d}"]))
    return text, Moment(moment, tenths)


@st.composite
def json_integers(draw: st.DrawFn, values: st.SearchStrategy[int], scalar: bool = True) -> tuple[Any, int]:
    """A JSON value the API accepts as an integer drawn from `values`, and that integer. `scalar=False` leaves
    out the forms not accepted where a bare scalar stands for a one-element list (a number with a fraction)."""
    n = draw(values)
    forms = ["int", "str", "padded"] + (["float"] if scalar else [])
    form = draw(st.sampled_from(forms))
    if form == "int":
        return n, n
    if form == "float":
        return float(n), n
    if form == "str":
        return str(n), n
    sign = "-" if n < 0 else draw(st.sampled_from(["", "+"]))
    zeros = "0" * draw(st.integers(0, 3))
    space = draw(st.sampled_from(["", " ", "\t"]))
    return f"{space}{sign}{zeros}{abs(n)}{space}", n
