"""bench/scale.py's figures: what one configuration (a Redis backend × N workers) measured, and how the
configurations are printed: the table, each one's details, what limits the throughput."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from bench.figures import ms, percentile


@dataclass
class Result:
    """What one configuration measured over its window."""

    backend: str
    workers: int
    actions: int
    seconds: float
    latencies: list[float]
    texts: Counter[str]
    """Answers with a text (a refusal, a stale button; also "Discard confirmed."), by text."""
    unanswered: int
    post_errors: Counter[str]
    rejected: Counter[str]
    worker_cores: list[float]
    redis_cores: float
    generator_cores: float
    redis_commands: int
    redis_by_command: Counter[str]
    """The workers' Redis commands by name (those a script runs counted too, as Redis counts them)."""
    generator_reads: int
    tracebacks: int
    errors: Counter[str]
    warnings: int
    exit_statuses: list[int | None]
    ready: list[float]
    setup_seconds: float
    stuck: int
    matches_over: int
    hands: int
    calls: Counter[str]
    """Bot API calls during the window: answers, sends/edits to groups and to private chats, and the edits
    refused "message is not modified" (``rejected``)."""
    drain_seconds: float
    behind: int
    checked: int
    behind_examples: list[str]
    repeated: int
    """``--check-screens``: hands that more than one message of their group shows (two workers posting one
    hand at once leave one: the other is deleted)."""
    deleted: int
    """``deleteMessage`` calls during the whole run (second copies removed)."""
    machine_cores: float
    """The whole machine's busy cores during the window (this run's processes and any other)."""

    @property
    def rate(self) -> float:
        """Actions per second."""
        return self.actions / self.seconds if self.seconds > 0 else float("nan")

    @property
    def workers_cores(self) -> float:
        """Cores the workers used together."""
        return sum(self.worker_cores)

    @property
    def total_cores(self) -> float:
        """Cores this run's processes used."""
        return self.workers_cores + self.redis_cores + self.generator_cores

    @property
    def other_cores(self) -> float:
        """Cores busy with processes that are not this run's (other work on a shared machine)."""
        return max(0.0, self.machine_cores - self.total_cores)

    @property
    def views_per_action(self) -> float:
        """Bot API calls besides the answers (sends, edits) per action, during the window."""
        return (self.calls["group"] + self.calls["private"]) / max(1, self.actions)

    def per_action_ms(self, cores: float) -> float:
        """``cores`` over the window, in CPU milliseconds per action."""
        return 1e3 * cores * self.seconds / self.actions if self.actions else float("nan")


def print_row(result: Result, base: Result | None) -> None:
    """A configuration's row of the table (``base``: the 1-worker one on the same Redis)."""
    ratio = result.rate / base.rate if base is not None and base.rate > 0 else float("nan")
    each = "+".join(f"{c:.2f}" for c in result.worker_cores)
    p50, p99 = ms(percentile(result.latencies, 0.5), 1), ms(percentile(result.latencies, 0.99), 1)
    cpu = f"{result.workers_cores:.2f} ({each}) / {result.redis_cores:.2f} / {result.generator_cores:.2f}"
    per_action = " / ".join(
        f"{result.per_action_ms(c):.2f}"
        for c in (result.workers_cores, result.redis_cores, result.generator_cores)
    )
    print(
        f"  {result.backend:<8} {result.workers:>2} {result.rate:>10.1f} {p50:>9} {p99:>9} {ratio:>6.2f}   "
        f"{cpu:<36} {result.total_cores:>5.2f} {result.other_cores:>5.2f}   {per_action:<19} "
        f"{result.redis_commands / max(1, result.actions):>6.1f}"
    )


def print_details(result: Result) -> None:
    """A configuration's details under the table."""
    texts = sum(result.texts.values())
    shown = ", ".join(f"{t!r} x{n}" for t, n in result.texts.most_common(3))
    print(
        f"  {result.backend} × {result.workers}: {result.actions} actions in {result.seconds:.1f} s; "
        f"{result.hands} hands dealt in all, {result.matches_over} matches over; workers ready in "
        f"{', '.join(f'{s:.1f}' for s in result.ready)} s; tables opened in {result.setup_seconds:.1f} s"
    )
    print(
        f"    answers with a text: {texts}{f' ({shown})' if texts else ''}; unanswered: {result.unanswered}; "
        f"tables left stuck: {result.stuck}; POSTs failed: {sum(result.post_errors.values())}"
        f"{f' {dict(result.post_errors)}' if result.post_errors else ''}"
    )
    views = result.calls["group"] + result.calls["private"]
    per_second = {k: v / result.seconds for k, v in result.calls.items()}
    print(
        f"    Bot API calls besides the answers: {views / result.seconds:.0f}/s, "
        f"{views / max(1, result.actions):.2f} per action ({per_second.get('group', 0):.0f}/s to groups, "
        f"{per_second.get('private', 0):.0f}/s to private chats, {result.calls['rejected']} refused "
        f"'message is not modified'; the bot's budget, one for every worker, allows 24/s); "
        f"refused 429 by the fake server's limits: {result.calls['limited']} ({result.calls['limited_bot']} "
        f"over the bot's 30 calls/s), most calls in one second: {result.calls['busiest']}; generator reads "
        f"of Redis: {result.generator_reads / max(1, result.actions):.2f} per action (not in the Redis "
        "commands per action)"
    )
    per_action = max(1, result.actions)
    print(
        "    Redis commands per action, by command: "
        + ", ".join(f"{name} {n / per_action:.2f}" for name, n in result.redis_by_command.most_common(12))
    )
    if not result.checked and result.drain_seconds:
        print(
            f"    --check-screens: the lanes were still sending {result.drain_seconds:.0f} s after the last "
            "press (every hand's messages go out in order, within the bot's 24 calls a second): screens not "
            f"checked (--drain longer, or fewer presses); hands shown by two messages: {result.repeated}"
        )
    if result.checked:
        print(
            f"    --check-screens: lanes drained {result.drain_seconds:.1f} s after the last press; then "
            f"group screens not showing the stored hand and turn: {result.behind} of {result.checked}; "
            f"hands shown by two messages: {result.repeated} ({result.deleted} second copies deleted)"
            + "".join(f"\n      {example}" for example in result.behind_examples[:30])
        )
    print(
        f"    calls rejected by the fake server: {sum(result.rejected.values())}"
        + "".join(f"\n      x{n} {r}" for r, n in result.rejected.most_common(3))
    )
    print(
        f"    workers' logs: Traceback lines {result.tracebacks}, ERROR {sum(result.errors.values())}, "
        f"WARNING {result.warnings}; exit status after SIGTERM: {result.exit_statuses}"
        + "".join(f"\n      x{n} {line}" for line, n in result.errors.most_common(3))
    )


def print_limits(results: list[Result], cores: int) -> None:
    """What limits the throughput at the largest worker count, from the CPU split."""
    print("what limits the throughput at the largest worker count:")
    for backend in dict.fromkeys(r.backend for r in results):
        mine = [r for r in results if r.backend == backend]
        one = next((r for r in mine if r.workers == 1), None)
        top = max(mine, key=lambda r: r.workers)
        busy = top.total_cores
        shares = sorted(
            (
                ("the workers", top.workers_cores),
                ("Redis", top.redis_cores),
                ("the generator + fake server", top.generator_cores),
            ),
            key=lambda item: -item[1],
        )
        split = ", ".join(f"{name} {value:.2f} ({100 * value / busy:.0f}%)" for name, value in shares)
        if top.other_cores >= 0.05:
            split += f"; other processes on the machine {top.other_cores:.2f}"
        if top.machine_cores >= 0.9 * cores:
            verdict = (
                f"CPU: the machine's {cores} cores are busy ({busy:.2f} cores used by this run: {split})"
            )
        else:
            verdict = (
                f"not the CPU alone ({busy:.2f} of {cores} cores used: {split}): the closed loop (one press "
                "in flight per table) and waiting (Redis round trips, presses in lock-step) bound it"
            )
        print(f"  {backend}, {top.workers} workers: {verdict}")
        if one is None or one is top:
            continue
        gain = top.workers_cores / max(1e-9, one.workers_cores)
        cost_one, cost_top = one.per_action_ms(one.workers_cores), top.per_action_ms(top.workers_cores)
        print(
            f"    1 worker used {one.workers_cores:.2f} core for {one.rate:.0f} actions/s ({cost_one:.2f} ms "
            f"of worker CPU per action); {top.workers} workers got {top.workers_cores:.2f} cores together "
            f"({gain:.2f}×) for {top.rate / max(1e-9, one.rate):.2f}× the actions, at {cost_top:.2f} ms of "
            "worker CPU per action"
        )
        room = cores - top.redis_cores - top.generator_cores - top.other_cores
        best = room / max(1e-9, one.workers_cores)
        print(
            f"    1 worker is bound by its own core (one Python process, one event loop: "
            f"{one.workers_cores:.2f} core busy); the cores left for {top.workers} workers once Redis, the "
            f"generator and other processes had theirs: {room:.2f}, so at the 1-worker CPU cost per action "
            f"the ratio could at best approach {best:.2f} on this machine"
        )
        print_ceiling(one, top, cores)
        calls_one, calls_top = one.views_per_action, top.views_per_action
        commands_one = one.redis_commands / max(1, one.actions)
        commands_top = top.redis_commands / max(1, top.actions)
        print(
            f"    each action costs the workers {cost_top:.2f} ms with {top.workers} against {cost_one:.2f} "
            f"with one; {top.workers} workers sent {calls_top:.2f} Bot API calls per action besides the "
            f"answers against {calls_one:.2f} with one (within the bot's one budget: "
            f"{top.calls['busiest']} calls in the busiest second; {top.calls['rejected']} refused 'message "
            f"is not modified': another worker had made that edit); Redis commands per action: "
            f"{commands_top:.1f} against {commands_one:.1f}"
        )


def print_ceiling(one: Result, top: Result, cores: int) -> None:
    """The ratio this machine allows when Redis and the bench grow with the actions, as they do: every action
    costs the workers, Redis and the generator (load + fake Bot API) what it cost them with one worker."""
    whole = one.workers_cores + one.redis_cores + one.generator_cores  # cores per 1-worker throughput
    free = cores - top.other_cores
    ceiling = min(float(top.workers), free / max(1e-9, whole))
    bench = one.per_action_ms(one.generator_cores)
    print(
        f"    per action the bench itself (load generator + fake Bot API server) costs {bench:.2f} ms of CPU "
        f"({100 * bench / max(1e-9, one.per_action_ms(one.workers_cores)):.0f}% of what the worker spends) "
        f"and Redis {one.per_action_ms(one.redis_cores):.2f} ms: with {free:.2f} cores free of other "
        f"processes, {top.workers} workers can do at most {ceiling:.2f}× the actions of one on this machine "
        "at these costs per action (the bench and Redis grow with the workers; a 1-worker run slowed by "
        "other processes makes this low); on machines of their own the workers would not share a core with "
        "the bench"
    )


def print_table(results: list[Result], cores: int) -> None:
    """The table of every configuration, then their details, then what limits the throughput."""
    print()
    print(
        f"  {'backend':<8} {'N':>2} {'actions/s':>10} {'p50':>9} {'p99':>9} {'ratio':>6}   "
        f"{'cores: workers (each) / redis / gen':<36} {'total':>5} {'other':>5}   "
        f"{'CPU ms/action w/r/g':<19} Redis cmds/action"
    )
    for r in results:
        base = next((b for b in results if b.backend == r.backend and b.workers == 1), None)
        print_row(r, base)
    print()
    for r in results:
        print_details(r)
    print()
    print_limits(results, cores)
