"""bench/soak.py's figures: what a :class:`bench.soak_run.Soak` saw (presses and their answers, the stored
tables' progress and deadlines, the group screens, the worker's memory and log), for the whole run and per
phase, printed."""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from pathlib import Path
from typing import Any

from bench.figures import most_within, ms, percentile
from bench.procs import is_error, is_traceback, is_warning, unstamped
from bench.soak_people import UNAVAILABLE, Press
from bench.soak_run import ANSWER_TARGET, FROZEN_TARGET, MACHINE_DELAY, NEXT_HAND_DELAY, Phase, Soak
from bench.soak_watch import STUCK_MARGIN
from tests.e2e.fake_telegram import FakeTelegram


def phase_of(phases: list[Phase], t: float) -> str:
    """The name of the phase instant ``t`` falls in."""
    for phase in phases:
        if phase.start <= t < phase.end:
            return phase.name
    if phases and t >= phases[-1].end:
        return phases[-1].name  # pressed in the last instant
    return phases[0].name if phases else "?"


def press_figures(tg: FakeTelegram, presses: list[Press], target: float = ANSWER_TARGET) -> dict[str, Any]:
    """Presses made, answered, refused "store unavailable", unanswered, answered within ``target`` (%),
    p50/p99/max."""
    records = [tg.callbacks[p.query] for p in presses]
    answered = [r for r in records if r.answered and r.answered_at is not None]
    times = sorted(r.answered_at - r.created for r in answered)  # type: ignore[operator]
    unavailable = sum(1 for r in answered if (r.answer or {}).get("text") in UNAVAILABLE)
    fast = sum(1 for t in times if t <= target)
    return {
        "n": len(records),
        "answered": len(answered),
        "unavailable": unavailable,
        "unanswered": len(records) - len(answered),
        "fast": 100.0 * fast / len(records) if records else float("nan"),
        "p50": percentile(times, 0.5),
        "p99": percentile(times, 0.99),
        "max": times[-1] if times else float("nan"),
    }


def log_lines(log: Path, no_faults: bool) -> list[tuple[str, str]]:
    """(phase, line) for each line of the worker's log."""
    phase = "start"
    names = {
        "setup": "setup",
        "play": "before the kill" if not no_faults else "play",
        "worker SIGKILL": "after the kill",
        "Redis SIGSTOP": "Redis frozen",
        "Redis SIGCONT": "after the thaw",
        "Redis SIGKILL": "Redis down",
        "Redis up again": "after Redis is back",
        "grace": "grace and stop",
        "SIGTERM": "grace and stop",
    }
    out = []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        found = re.fullmatch(r"--- soak: (.+) ---", line)
        if found:
            phase = names.get(found.group(1), found.group(1))
            continue
        out.append((phase, line))
    return out


def report(soak: Soak) -> None:
    """Everything, for the whole run, then per phase."""
    args, people, watch, tg = soak.args, soak.people, soak.watch, soak.tg
    groups, tables, presses = people.groups, people.tables, people.presses
    start = soak.play_start

    def phase(t: float) -> str:
        return phase_of(soak.phases, t)

    humans = sum(len(g.users) for g in groups)
    print(
        f"soak: {len(groups)} group chats, {humans} people and {4 * len(groups) - humans} "
        f"machine seats, {args.minutes:g} min of play, seed {args.seed}; "
        f"TURN_TIMEOUT={soak.turn_timeout:g} MACHINE_DELAY={MACHINE_DELAY:g} "
        f"NEXT_HAND_DELAY={NEXT_HAND_DELAY:g}; production pacing"
    )
    ready = ", ".join(f"{s:.1f} s" for s in soak.worker_ready)
    faults = "none (--no-faults)"
    if not args.no_faults:
        faults = " · ".join(f"{name} at {t - start:.0f} s" for t, name in soak.events)
        faults += f" (Redis down {soak.redis_back or 0:.1f} s)"
    print(f"  faults: {faults}; worker start-up to polling: {ready}")
    hands = sum(t.hand_no for t in tables.values())
    finished = sum(1 for t in tables.values() if t.ended_at is not None and t.ended_at < soak.play_end)
    print(
        f"  tables: {len(tables)} opened ({people.open_failures} /newgame attempts failed), "
        f"{finished} matches over during the play (the group then opens a new table), {hands} hands dealt"
    )
    total = press_figures(tg, presses)
    kinds = Counter(p.kind for p in presses)
    print(
        f"  presses made: {total['n']}  ({', '.join(f'{k} {n}' for k, n in kinds.most_common())}); "
        f"turns sat out: {people.sat_out}; presses repeated after 'store unavailable': "
        f"{people.retried_unavailable}"
    )
    print(
        f"  answered: {total['answered']} (of which refused 'store unavailable': "
        f"{total['unavailable']}); UNANSWERED: {total['unanswered']}"
    )
    print(
        f"  answered within 1 s: {total['fast']:.1f}%   answer time p50 {ms(total['p50'])} · "
        f"p99 {ms(total['p99'])} · max {ms(total['max'])}"
    )
    texts = Counter(
        (tg.callbacks[p.query].answer or {}).get("text") or "(no text)"
        for p in presses
        if tg.callbacks[p.query].answered
    )
    print("  answers: " + " · ".join(f"{t[:48]!r} x{n}" for t, n in texts.most_common(6)))
    stuck = [(t, s) for t in tables.values() for s in t.stuck]
    longest = max(tables.values(), key=lambda t: t.longest[1], default=None)
    where = ""
    if longest is not None and longest.longest[1] > 0:
        began, seconds = longest.longest
        where = f"{seconds:.1f} s from {began - start:.0f} s ({phase(began)})"
    limit = soak.turn_timeout + STUCK_MARGIN
    print(
        f"  tables stuck: {len({t.id for t, _ in stuck})}   (limit {limit:g} s without progress while "
        f"playing; longest gap: {where or 'n/a'})"
    )
    for table, (began, seconds) in stuck[:10]:
        print(
            f"    table {table.id} (group {table.group.chat.title}): no progress for {seconds:.1f} s "
            f"from {began - start:.0f} s ({phase(began)}); last state: "
            f"{(table.state or {}).get('due_key')} due "
            f"{float((table.state or {}).get('due') or 0) - watch.epoch_offset - start:.1f} s"
        )
    lags = sorted(lag.seconds for lag in watch.lags)
    by_kind = Counter(lag.kind for lag in watch.lags)
    print(
        f"  deadline lag: p50 {ms(percentile(lags, 0.5))} · p99 {ms(percentile(lags, 0.99))} · max "
        f"{ms(lags[-1] if lags else float('nan'))} over {len(lags)} firings "
        f"({', '.join(f'{k} {n}' for k, n in by_kind.most_common())}; {watch.unattributed} not measured: "
        "versions missed between polls)"
    )
    for kind in ("machine", "deal", "turn"):
        values = sorted(lag.seconds for lag in watch.lags if lag.kind == kind)
        if values:
            print(
                f"    {kind:<8} p50 {ms(percentile(values, 0.5))} · p99 {ms(percentile(values, 0.99))} · "
                f"max {ms(values[-1])}"
            )
    worst = sorted(watch.lags, key=lambda lag: -lag.seconds)[:3]
    print(
        "    latest: "
        + "; ".join(
            f"{lag.kind} of {lag.table} due at {lag.due - start:.1f} s ({phase(lag.due)}) +{ms(lag.seconds)}"
            for lag in worst
        )
    )
    report_frozen(soak)
    report_memory(soak)
    report_log(soak)
    rejected = [c for c in tg.rejected() if c.method != "getUpdates"]
    reasons = Counter(f"{c.method}: {c.description}"[:100] for c in rejected)
    print(
        f"  Bot API calls rejected by the fake server: {len(rejected)}"
        + ("".join(f"\n    x{n} {r}" for r, n in reasons.most_common(5)) if rejected else "")
    )
    print(f"  buttons gone between a look and a press (not pressed): {people.vanished}")
    report_screens(soak)
    report_phases(soak)
    unanswered = [p for p in presses if not tg.callbacks[p.query].answered]
    for p in unanswered[:10]:
        record = tg.callbacks[p.query]
        print(
            f"  unanswered: {p.kind} press {record.data!r} by {record.user.first_name} at "
            f"{p.created - start:.1f} s ({phase(p.created)})"
        )


def report_frozen(soak: Soak) -> None:
    """The presses made while Redis was frozen: each must be answered ("store unavailable"), in time."""
    frozen = next((p for p in soak.phases if p.name == "Redis frozen"), None)
    if frozen is None:
        return
    made = [p for p in soak.people.presses if frozen.start <= p.created < frozen.end]
    f = press_figures(soak.tg, made, FROZEN_TARGET)
    print(
        f"  Redis frozen {frozen.end - frozen.start:.0f} s: {f['n']} presses, answered within "
        f"{FROZEN_TARGET:g} s: {f['fast']:.1f}%, NEVER ANSWERED: {f['unanswered']} (must be 0); "
        f"'store unavailable' {f['unavailable']}; answer time p50 {ms(f['p50'])} · p99 {ms(f['p99'])} · "
        f"max {ms(f['max'])}"
    )


def report_memory(soak: Soak) -> None:
    """The worker's memory per chat it served."""
    groups = soak.people.groups
    private = {u.id for g in groups for u in g.users.values()}
    chats = len(groups) + len(private)
    if soak.final_rss is not None:
        above = (
            ""
            if soak.baseline_rss is None
            else f"; {(soak.final_rss - soak.baseline_rss) / chats:.0f} KiB per chat above the "
            f"{soak.baseline_rss / 1024:.1f} MiB of a worker that served no chat yet"
        )
        print(
            f"  memory per chat: {soak.final_rss / chats:.0f} KiB (worker VmRSS "
            f"{soak.final_rss / 1024:.1f} MiB / {chats} chats: {len(groups)} groups + "
            f"{len(private)} private){above}"
        )


def report_log(soak: Soak) -> None:
    """What the worker's log holds: tracebacks, errors and warnings by phase, the commonest of them."""
    lines = log_lines(soak.log, soak.args.no_faults)
    tracebacks = Counter(phase for phase, line in lines if is_traceback(line))
    errors = Counter(phase for phase, line in lines if is_error(line))
    warnings = Counter(phase for phase, line in lines if is_warning(line))
    print(
        f"  worker log: {len(lines)} lines; Tracebacks: {sum(tracebacks.values())} "
        f"{dict(tracebacks) or ''}; ERROR: {sum(errors.values())} {dict(errors) or ''}; "
        f"WARNING: {sum(warnings.values())} {dict(warnings) or ''}; exit status after SIGTERM: "
        f"{soak.exit_status} (after {soak.exit_seconds:.1f} s)"
    )
    shown = Counter(unstamped(line)[:150] for _, line in lines if is_error(line) or is_warning(line))
    for line, n in shown.most_common(6):
        print(f"    x{n} {line}")
    exceptions = Counter(
        line.strip()[:150]
        for _, line in lines
        if re.match(r"^[\w.]+(Error|Exception|Unavailable|Timeout\w*)\b", line.strip())
    )
    for line, n in exceptions.most_common(4):
        print(f"    x{n} {line}")


def screen_delays(soak: Soak) -> list[tuple[float, float | None]]:
    """Per person's turn begun during the play: when it began, and how long until its buttons were first
    on the group's screen (``None``: never, the turn was over before the screen showed it)."""
    out: list[tuple[float, float | None]] = []
    for table in soak.people.tables.values():
        first: dict[str, float] = {}
        for message in soak.tg.messages_in(table.group.chat, include_deleted=True, from_bot=True):
            for version in message.history:
                for row in (version.reply_markup or {}).get("inline_keyboard", []):
                    for button in row:
                        stamp = str(button.get("callback_data") or "").rsplit(".", 1)[0]
                        if stamp in table.turns:
                            first[stamp] = min(first.get(stamp, version.time), version.time)
        for stamp, began in table.turns.items():
            if soak.play_start <= began < soak.play_end:
                out.append((began, first[stamp] - began if stamp in first else None))
    return out


def group_calls(soak: Soak) -> tuple[float, int]:
    """Calls (sends and edits) per minute per group during the play, and the most in any 60 s window."""
    groups = {g.chat.id for g in soak.people.groups}
    times: dict[int, list[float]] = {g: [] for g in groups}
    for call in soak.tg.calls():
        with contextlib.suppress(TypeError, ValueError):
            chat = int(call.chat_id)
            if call.ok and chat in groups and soak.play_start <= call.time <= soak.play_end:
                times[chat].append(call.time)
    worst = max((most_within(series, 60.0) for series in times.values()), default=0)
    minutes = max(1e-9, (soak.play_end - soak.play_start) / 60.0)
    return sum(len(s) for s in times.values()) / len(times) / minutes, worst


def report_screens(soak: Soak) -> None:
    """How late a person's turn reached the group's screen, and the calls each group got."""
    delays = screen_delays(soak)
    shown = sorted(d for _, d in delays if d is not None)
    in_time = sum(1 for d in shown if d < soak.turn_timeout)
    rate, worst = group_calls(soak)
    print(
        f"  a person's turn on the group's screen (buttons shown after the turn began): p50 "
        f"{ms(percentile(shown, 0.5))} · p99 {ms(percentile(shown, 0.99))} · max "
        f"{ms(shown[-1] if shown else float('nan'))}; before the {soak.turn_timeout:g} s timeout: "
        f"{100.0 * in_time / max(1, len(delays)):.0f}% of {len(delays)} turns; never shown: "
        f"{len(delays) - len(shown)}"
    )
    print(
        f"  calls to each group: {rate:.1f} per minute on average, at most {worst} in 60 s "
        "(the adapter's ChatRateLimiter: 20 new messages per minute per group, per process)"
    )


def report_phases(soak: Soak) -> None:
    """The table of figures per phase."""
    print(
        "per phase (presses by when they were made, deadlines by when they were due, a person's turn by "
        "when it began; late: not on the group's screen before its timeout):"
    )
    print(
        f"  {'phase':<20} {'span':>13} {'presses':>8} {'<=1 s':>7} {'p50':>8} {'p99':>8} {'unansw.':>8} "
        f"{'unavail.':>8} {'lag p50':>8} {'lag p99':>8} {'lag max':>8} {'firings':>8} {'screen p50':>10} "
        f"{'late':>5}"
    )
    screens = screen_delays(soak)
    for phase in soak.phases:

        def within(t: float, name: str = phase.name) -> bool:
            return phase_of(soak.phases, t) == name

        f = press_figures(soak.tg, [p for p in soak.people.presses if within(p.created)])
        lags = sorted(lag.seconds for lag in soak.watch.lags if within(lag.due))
        span = f"{phase.start - soak.play_start:5.0f}–{phase.end - soak.play_start:.0f} s"
        turns = [d for began, d in screens if within(began)]
        shown = [d for d in turns if d is not None]
        late = 100.0 * sum(1 for d in turns if d is None or d >= soak.turn_timeout) / max(1, len(turns))
        print(
            f"  {phase.name:<20} {span:>13} {f['n']:>8} {f['fast']:>6.1f}% {ms(f['p50']):>8} "
            f"{ms(f['p99']):>8} {f['unanswered']:>8} {f['unavailable']:>8} "
            f"{ms(percentile(lags, 0.5)):>8} {ms(percentile(lags, 0.99)):>8} "
            f"{ms(lags[-1] if lags else float('nan')):>8} {len(lags):>8} "
            f"{ms(percentile(shown, 0.5)):>10} {late:>4.0f}%"
        )
