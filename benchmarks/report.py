"""The benchmark's Markdown report and its plot (SVG, drawn here: no plotting library needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

TARGETS = {"clean": 0.98, "12 dB peak": 0.95, "6 dB peak": 0.90}
#: End of speech -> first sample of the reply, p95 (ms); real-time factor per room, one core.
LATENCY_TARGET_MS = 400
RTF_TARGET = 0.1
#: The parts of the latency, in the order they are spent (``benchmarks.latency.PARTS``), and what they are.
LATENCY_PARTS = {
    "hangover": "endpointer: end of speech → utterance closed (0.25 s of non-speech after a whole command, "
                "else 0.6 s), audio time",
    "chunk": "rest of the 0.05 s microphone block it closed in",
    "loop": "chunk complete → handed to the Listener",
    "decode": "handed over → `command` event (echo cancellation, streaming decode of the chunk, final decode "
              "of the whole utterance unless it was done ahead in the pause, parse)",
    "reply_wait": "`command` event → reply handed to the output (background synthesis when not rendered yet)",
    "output": "handed to the output → first DAC sample",
}
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def pct(rate: float | None) -> str:
    """0.9512 -> "95.1%"."""
    return "n/a" if rate is None else f"{100 * rate:.1f}%"


def _mark(ok: bool | None) -> str:
    return "" if ok is None else (" ✅" if ok else " ❌")


def _cell(table: dict[str, Any], cond: str) -> dict[str, Any] | None:
    return table.get(cond)


def summary_rows(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(figure, measured, target) for the headline table."""
    rows: list[tuple[str, str, str]] = []
    acc = result["acceptance"]
    for engine, per in acc["engines"].items():
        for cond, target in TARGETS.items():
            for mode in ("full", "phase"):
                cell = _cell(per.get(mode, {}), cond)
                if cell is None:
                    continue
                rows.append((f"{engine}: acceptance, {cond} ({'every intent' if mode == 'full' else 'phase grammar'})",
                             pct(cell["rate"]) + _mark(cell["rate"] >= target), f"≥ {target:.0%}"))
    for engine, fa in result.get("false_accepts", {}).items():
        for label in ("without wake word", "with wake word"):
            if label in fa:
                every = fa[label]["by_kind"]["all"]
                # Met only when even the 95% upper bound is under the target; with too little audio, say so.
                verdict = " ✅" if every["per_hour_95_upper"] <= 0.5 else (
                    " ❌" if every["per_hour"] > 0.5 else " (too little audio to show ≤ 0.5)")
                rows.append((f"{engine}: false accepts per hour, {label} ({every['hours']:.2f} h of speech)",
                             f"{every['per_hour']} (95% upper bound {every['per_hour_95_upper']}){verdict}", "≤ 0.5"))
    for engine, bi in result.get("barge_in", {}).items():
        for label, cond in bi["conditions"].items():
            share = "" if label == "silence" or cond.get("share_of_silence") is None else \
                f" ({pct(cond['share_of_silence'])} of silence's)"
            rows.append((f"{engine}: acceptance while the moderator talks, {label} ({cond['n']} commands)",
                         pct(_rate(cond)) + share, ""))
    for engine, lat in result.get("latency", {}).items():
        p95 = lat["to_reply_ms"]["p95"]
        rows.append((f"{engine}: end of speech → `command` event, p50 / p95",
                     f"{lat['to_command_ms']['p50']} / {lat['to_command_ms']['p95']} ms", ""))
        rows.append((f"{engine}: end of speech → first sample of the reply, p50 / p95",
                     f"{lat['to_reply_ms']['p50']} / {p95} ms" + _mark(p95 is not None and p95 <= LATENCY_TARGET_MS),
                     f"p95 ≤ {LATENCY_TARGET_MS} ms"))
    for engine, cost in result.get("cost", {}).items():
        rows.append((f"{engine}: real-time factor, one room, one core", f"{cost['rtf_one_room']}"
                     + _mark(cost["rtf_one_room"] <= RTF_TARGET), f"≤ {RTF_TARGET}"))
        if "rtf_one_room_aec" in cost:
            rows.append((f"{engine}: real-time factor with echo cancellation (listening path), one room, one core",
                         f"{cost['rtf_one_room_aec']}" + _mark(cost["rtf_one_room_aec"] <= RTF_TARGET),
                         f"≤ {RTF_TARGET}"))
            rows.append((f"{engine}: real-time factor of the echo path alone (`EchoPath.cancel`), one room",
                         f"{cost['rtf_echo_one_room']}", ""))
        rows.append((f"{engine}: CPU with both rooms listening (% of one core)", f"{cost['cpu_percent_both_rooms']}%",
                     ""))
        rows.append((f"{engine}: peak RSS", f"{cost['peak_rss_mb']} MB" + _mark(cost["peak_rss_mb"] <= 300),
                     "≤ 300 MB"))
        rows.append((f"{engine}: launch to listening", f"{cost['launch_to_listening_s']} s"
                     + _mark(cost["launch_to_listening_s"] <= 3), "≤ 3 s"))
    timer = result.get("timer")
    if timer:
        lat = timer["lateness_ms"]
        rows.append((f"timed announcements: lateness of the first sample ({lat['n']}), p50 / p95 / max",
                     f"{lat['p50']} / {lat['p95']} / {lat['max']} ms" + _mark(lat["p95"] <= timer["target_ms"]),
                     f"≤ {timer['target_ms']} ms"))
    return rows


def markdown(result: dict[str, Any], plot_name: str) -> str:
    """The whole report."""
    meta = result["meta"]
    lines = [
        "# Recognition benchmark",
        "",
        f"Measured on {meta['date']} on {meta['machine']}, commit `{meta['commit']}`, in {meta['wall_seconds']:.0f} s "
        f"({meta.get('cpu_seconds', 0):.0f} s of CPU; load average {meta.get('load_average_at_start', ['?'])[0]} at "
        f"the start, {meta.get('load_average_at_end', ['?'])[0]} at the end):",
        "",
        "```bash",
        meta["command"],
        "```",
        "",
        "Targets are shown beside the figures; a miss is not a failed build. ✅ meets the target, ❌ misses it.",
        "",
        "| figure | measured | target |",
        "| --- | --- | --- |",
        *[f"| {a} | {b} | {c} |" for a, b, c in summary_rows(result)],
        "",
    ]
    lines += [f"- {note}" for note in result.get("notes", [])]
    lines += ["", f"![acceptance against SNR]({plot_name})", ""]
    lines += _acceptance(result["acceptance"])
    for engine, fa in result.get("false_accepts", {}).items():
        lines += _false_accepts(engine, fa)
    for engine, bi in result.get("barge_in", {}).items():
        lines += _barge_in(engine, bi)
    for engine, lat in result.get("latency", {}).items():
        lines += _latency(engine, lat)
    for engine, cost in result.get("cost", {}).items():
        lines += [f"## Cost ({engine})", "",
                  f"{cost['seconds']:.0f} s of party talk and commands with babble at 12 dB per room. "
                  f"RSS once listening: {cost['rss_mb_listening']} MB; peak: {cost['peak_rss_mb']} MB. "
                  f"Real-time lag after both rooms' audio: {cost['realtime_lag_s']} s.", ""]
        if "rtf_one_room_aec" in cost:
            lines += [f"Full duplex: the same room's audio with the moderator talking "
                      f"{pct(cost['moderator_talking_share'])} of the time, heard through a simulated room and "
                      "cancelled. Real-time factors on one core:", "",
                      "| listening path | real-time factor |", "| --- | --- |",
                      f"| `Listener.feed`, without echo cancellation | {cost['rtf_one_room']} |",
                      f"| `Listener.feed` with an `EchoPath` (echo cancellation) | {cost['rtf_one_room_aec']} |",
                      f"| the echo path alone (`EchoPath.cancel`) | {cost['rtf_echo_one_room']} |",
                      f"| of which the canceller's filter (speex) | {cost['rtf_canceller_one_room']} |", ""]
    timer = result.get("timer")
    if timer:
        game = timer["game"]
        lines += ["## Timer accuracy", "",
                  f"An 11-player, 5-round game (rounds {game['durations']} s{', quick' if game['quick'] else ''}) "
                  f"played in real time by `benchmarks/announce_latency.py`; {timer['all_announcements']} "
                  "announcements, lateness of the first DAC sample of each timed one against its schedule.", ""]
    return "\n".join(lines) + "\n"


def _rate(cond: dict[str, Any]) -> float | None:
    return cond.get("rate", cond["right"] / cond["n"] if cond["n"] else None)


def _ms(cell: dict[str, Any] | None, key: str) -> str:
    value = None if cell is None else cell.get(key)
    return "n/a" if value is None else f"{value:g}"


def _barge_in(engine: str, bi: dict[str, Any]) -> list[str]:
    """The "While the moderator talks" section (``benchmarks.barge_in``)."""
    lines = ["## While the moderator talks" + (f" ({engine})" if engine != "pocketsphinx" else ""), "",
             f"{bi['commands']} commands (roster 0, voices " + ", ".join(f"`{v}`" for v in bi.get("voices", []))
             + ") each said while an announcement plays, at a random point of it: the moderator's voice reaches the "
             "microphone through a simulated room (20-60 ms away, RT60 0.3 s) at the signal-to-echo ratio shown "
             "(the player against the moderator's voice in the microphone, peak-frame power), over a microphone's "
             "hiss. The delay is found first with the set-up chirp, and the stream goes through the echo path, "
             "the endpointer and the recognizer as in `moderator play` (`benchmarks/barge_in.py`). *silence*: the "
             "same commands with the moderator silent, the ceiling; *no cancellation*: the microphone as it is.", "",
             "| condition | accepted | rate | share of silence's acceptance | echo path real-time factor |",
             "| --- | --- | --- | --- | --- |"]
    for label, cond in bi["conditions"].items():
        rtf = cond.get("echo_rtf")
        lines.append(f"| {label} | {cond['right']} / {cond['n']} | {pct(_rate(cond))} | "
                     f"{pct(cond.get('share_of_silence'))} | {'' if rtf is None else rtf} |")
    misses = [(label, m) for label, cond in bi["conditions"].items() if "cancelled" in label
              for m in cond.get("missed", [])]
    if misses:
        lines += ["", "<details><summary>Commands missed with cancellation</summary>", "",
                  "| condition | said | voice | heard |", "| --- | --- | --- | --- |"]
        lines += [f"| {label} | {m['text']} | `{m['voice']}` | {'; '.join(m['heard']) or '(nothing)'} |"
                  for label, m in misses]
        lines += ["", "</details>"]
    return [*lines, ""]


def _latency(engine: str, lat: dict[str, Any]) -> list[str]:
    """The "Latency" section: totals, where the time goes, and the replies' rendering."""
    duplex = "" if lat.get("aec") is None else (
        f", the listening loop of `moderator play` (echo cancellation `{lat['aec']}`"
        + ("" if lat.get("ser_db") is None else
           f"; the microphones hear the moderator through a simulated room, the players {lat['ser_db']:g} dB over it")
        + ")")
    lines = [f"## Latency ({engine})", "",
             f"{lat['spoken']} commands said by {lat['voice']} in a real-time game (PulseAudio null sinks){duplex}; "
             f"{lat['recognized']} recognized. Players wait until the moderator has finished. Output underruns "
             f"reported by the speakers: {lat['output_underruns']}.", "",
             "| from the end of speech to | p50 | p95 | max |", "| --- | --- | --- | --- |"]
    for label, key in (("the utterance handed over (endpointing)", "endpointing_ms"),
                       ("the `command` event", "to_command_ms"), ("the reply's first sample", "to_reply_ms")):
        cell = lat.get(key)
        lines.append(f"| {label} | {_ms(cell, 'p50')} ms | {_ms(cell, 'p95')} ms | {_ms(cell, 'max')} ms |")
    breakdown = lat.get("breakdown_ms")
    if not breakdown:
        return [*lines, ""]
    share = lat.get("breakdown_share_of_p50", {})
    lines += ["", "Where the time goes (each part's own percentiles; the share is of the sum of the p50s):", "",
              "| part | p50 | p95 | max | share |", "| --- | --- | --- | --- | --- |"]
    for part, what in LATENCY_PARTS.items():
        cell = breakdown.get(part)
        if cell is not None:
            lines.append(f"| {part}: {what} | {_ms(cell, 'p50')} ms | {_ms(cell, 'p95')} ms | {_ms(cell, 'max')} ms "
                         f"| {pct(share.get(part))} |")
    steps, replies = lat.get("decode_steps_ms", {}), lat.get("replies", {})
    if steps:
        lines += ["", "Within *decode*, p50 / p95: " + "; ".join(
            f"{name} {_ms(steps.get(key), 'p50')} / {_ms(steps.get(key), 'p95')} ms"
            for name, key in (("echo cancellation of the closing chunk", "cancel"),
                              ("streaming decode of it", "accept"),
                              ("final decode of the whole utterance", "recognize")))
            + f". The endpointer closed {lat.get('early_endpoints', 0)} of {lat['recognized']} utterances after the "
            "short hangover (the partial result was already a whole command). Endpointing is "
            f"{pct(lat.get('endpointing_share'))} of the wait for the reply (median per command)."]
    floor = lat.get("audio_path_only_ms")
    if floor:
        lines += ["", "Without any decoding or synthesis, hangover, chunk, loop and output alone add up to p50 "
                  f"{_ms(floor, 'p50')} ms, p95 {_ms(floor, 'p95')} ms per command (against p95 ≤ "
                  f"{LATENCY_TARGET_MS} ms for the whole)."]
    if replies:
        rendered = replies.get("rendered_on_the_fly", 0)
        lines += ["", f"Replies: {replies.get('cached', 0)} found rendered, {rendered} synthesized on the fly in the "
                  f"background ({', '.join(f'`{k}`' for k in replies.get('keys_rendered_on_the_fly', [])) or 'none'}; "
                  f"pre-rendered at set-up: {replies.get('in_setup_phrases', 0)}). Synthesis "
                  f"took p50 {_ms(replies.get('render_ms'), 'p50')} ms, p95 {_ms(replies.get('render_ms'), 'p95')} ms; "
                  f"end of speech → reply, p50 / p95: {_ms(replies.get('to_reply_cached_ms'), 'p50')} / "
                  f"{_ms(replies.get('to_reply_cached_ms'), 'p95')} ms found rendered, "
                  f"{_ms(replies.get('to_reply_rendered_ms'), 'p50')} / "
                  f"{_ms(replies.get('to_reply_rendered_ms'), 'p95')} ms synthesized."]
    return [*lines, ""]


def _acceptance(acc: dict[str, Any]) -> list[str]:
    lines = ["## Command acceptance", "",
             f"{acc['commands']} commands (sentences of every template of `grammars/en.yaml`, with "
             f"{len(acc['rosters'])} rosters of 8-12 names), each said by one of {len(acc['voices'])} voices: "
             + ", ".join(f"`{v}`" for v in acc["voices"]) + ". Noise: 8-talker babble of synthesized party talk. "
             "A command counts as accepted only when exactly one command came out and its intent and every slot "
             "are right. *Every intent*: the recognizer listens for the whole grammar; *phase grammar*: only for the "
             "intents the engine allows in the phase where the command is said (as the Listener does; "
             "intents no phase allows yet, `predict` without a Gambler in the deck and `confirm`, are left out). "
             "The babble goes on after the command, as at a party, until the endpointer has closed an utterance "
             "(at most 8 s more); every utterance closed by then is recognized.", ""]
    for engine, per in acc["engines"].items():
        full, phase = per.get("full", {}), per.get("phase", {})
        lines += [f"### {engine}", "",
                  "| noise (peak-frame SNR) | same noise as average-power SNR | every intent: right / wrong / missed "
                  "| phase grammar | target |", "| --- | --- | --- | --- | --- |"]
        for cond, cell in full.items():
            other = cell.get("other_definition_snr_db_mean")
            ph = phase.get(cond)
            lines.append(f"| {cond} | {'' if other is None else f'{other} dB'} | {pct(cell['rate'])}: "
                         f"{cell['right']} / {cell['wrong']} / {cell['missed']} | "
                         f"{pct(ph['rate']) + ' of ' + str(ph['n']) if ph else ''} | "
                         f"{TARGETS.get(cond, '') and f'≥ {TARGETS[cond]:.0%}'} |")
        conds = list(full)
        lines += ["", "By voice (every intent):", "", "| voice | " + " | ".join(conds) + " |",
                  "| --- |" + " --- |" * len(conds)]
        for voice in acc["voices"]:
            lines.append(f"| `{voice}` | " + " | ".join(pct(full[c]["by_voice"].get(voice)) for c in conds) + " |")
        lines += ["", "By intent (every intent):", "", "| intent | n | " + " | ".join(conds) + " |",
                  "| --- | --- |" + " --- |" * len(conds)]
        for intent, n in sorted(acc["intents"].items(), key=lambda kv: full[conds[0]]["by_intent"].get(kv[0], 0)):
            lines.append(f"| {intent} | {n} | " + " | ".join(pct(full[c]["by_intent"].get(intent)) for c in conds)
                         + " |")
        conf = per.get("confidence_clean_hist")
        if conf:
            lines += ["", "Recognizer confidence of the clean commands (counts in tenths, 0.0-0.1 ... 0.9-1.0): "
                      f"{conf['counts']}"]
        lines += ["", f"Recognizer real-time factor over these utterances: {per['recognizer_rtf']}.", "",
                  "<details><summary>Clean commands not accepted</summary>", "",
                  "| said | voice | heard | outcome | confidence |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {m['text']} | `{m['voice']}` | {m['heard']} | {m['outcome']} | {m['confidence']} |"
                  for m in per["misses_clean"]]
        lines += ["", "</details>", ""]
    return lines


def _false_accepts(engine: str, fa: dict[str, Any]) -> list[str]:
    lines = [f"## False accepts ({engine})", "",
             "Speech with no command in it, fed through the game's `Listener` (one shared microphone, roster "
             "Alice...Heidi) in a game in turn at each of: " + ", ".join(fa["phases"]) + ". A false accept is a "
             "`command` event. *chatter*: each voice saying the party talk with pauses; *babble*: continuous "
             "8-talker babble; *human*: the recordings of Debian's `pocketsphinx-testdata` (LibriVox readings, "
             "spoken cards and digits).", "",
             "| wake word | audio | hours | false accepts | per hour (95% upper bound) | moderator spoke, per hour |",
             "| --- | --- | --- | --- | --- | --- |"]
    for label in ("without wake word", "with wake word"):
        if label not in fa:
            continue
        for kind, cell in fa[label]["by_kind"].items():
            lines.append(f"| {fa[label]['wake_word'] or 'none'} | {kind} | {cell['hours']} | {cell['false_accepts']} | "
                         f"{cell['per_hour']} ({cell['per_hour_95_upper']}) | {cell['moderator_spoke_per_hour']} |")
    for label in ("without wake word", "with wake word"):
        if label in fa and fa[label]["examples"]:
            lines += ["", f"What was accepted, {label}: "
                      + "; ".join(f"\"{e['heard'] or e['text']}\" ({e['kind']}, {e['phase']})"
                                  for e in fa[label]["examples"][:12])]
        if label in fa:
            lines += ["", f"Confidence of everything heard, {label} (tenths): {fa[label]['confidence']['counts']}"]
    return [*lines, ""]


def svg_plot(acc: dict[str, Any], width: int = 640, height: int = 380) -> str:
    """Acceptance against peak-frame SNR: a line per engine and grammar, thin lines per voice."""
    left, right, top, bottom = 60, 200, 30, 50
    conds = [c for c in acc["conditions"] if c == "clean" or c.endswith("peak")]
    xs = {c: left + i * (width - left - right) / max(1, len(conds) - 1) for i, c in enumerate(reversed(conds))}

    def y(rate: float) -> float:
        return top + (1 - rate) * (height - top - bottom)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           'font-size="11">', f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="13">Commands accepted (intent and every slot right) vs. babble</text>']
    for tick in range(0, 101, 20):
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(tick / 100):.1f}" y2="{y(tick / 100):.1f}" '
                   'stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y(tick / 100) + 4:.1f}" text-anchor="end">{tick}%</text>')
    for c, x in xs.items():
        out.append(f'<text x="{x:.1f}" y="{height - bottom + 16}" text-anchor="middle">{c.replace(" peak", "")}</text>')
    out.append(f'<text x="{(left + width - right) / 2}" y="{height - 12}" text-anchor="middle">'
               'SNR, peak-frame definition (dB)</text>')
    for c, t in TARGETS.items():
        if c in xs:
            out.append(f'<path d="M{xs[c] - 8:.1f},{y(t):.1f} h16" stroke="black" stroke-width="2"/>')
    legend, n = [], 0
    for engine, per in acc["engines"].items():
        series = [(f"{engine}, every intent", per.get("full", {}), 2.5, "")]
        series += [(f"{engine}, phase grammar", per.get("phase", {}), 2.5, ' stroke-dasharray="5,3"')]
        series += [(v.split(":", 1)[1][:22], {c: {"rate": cell["by_voice"].get(v)} for c, cell in per["full"].items()},
                    0.8, "") for v in acc["voices"]]
        for name, table, stroke, dash in series:
            points = [(xs[c], y(table[c]["rate"])) for c in xs if c in table and table[c]["rate"] is not None]
            if not points:
                continue
            color = PALETTE[n % len(PALETTE)] if stroke > 1 else "#999"
            path = " ".join(f"{'M' if i == 0 else 'L'}{px:.1f},{py:.1f}" for i, (px, py) in enumerate(points))
            out.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="{stroke}"{dash}/>')
            if stroke > 1:
                out += [f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{color}"/>' for px, py in points]
                legend.append((name, color, dash))
                n += 1
    legend += [("each voice (every intent)", "#999", ""), ("target", "black", "")]
    for i, (name, color, dash) in enumerate(legend):
        ly = top + 10 + i * 18
        out.append(f'<path d="M{width - right + 12},{ly} h22" stroke="{color}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{width - right + 40}" y="{ly + 4}">{name}</text>')
    return "\n".join([*out, "</svg>"]) + "\n"


def write(result: dict[str, Any], directory: Path) -> tuple[Path, Path]:
    """Write report.md and acceptance.svg into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    plot = directory / "acceptance.svg"
    plot.write_text(svg_plot(result["acceptance"]))
    report = directory / "report.md"
    report.write_text(markdown(result, plot.name))
    return report, plot


def main() -> int:
    """Render report.md and the plot again from a results.json: ``python -m benchmarks.report [FILE]``."""
    import json
    import sys

    default = Path(__file__).resolve().parents[1] / "docs" / "benchmarks" / "results.json"
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    md, plot = write(json.loads(path.read_text()), path.parent)
    print(f"wrote {md} and {plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
