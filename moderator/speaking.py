"""Assembles speech output: synthesizer, render cache, pre-rendering and the Speaker, for an AudioOut."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from moderator.audio.reference import PlayedAudio
from moderator.game.engine import Engine
from moderator.ports import AudioOut, Synthesizer
from moderator.settings import LiveTiming, Schedule, VoiceSettings
from moderator.speech.catalog import Catalog
from moderator.speech.prerender import setup_phrases
from moderator.voice.cache import PrerenderReport, RenderCache, default_cache_dir
from moderator.voice.speaker import Speaker


def voice_settings(catalog: Catalog) -> VoiceSettings:
    """The ``voice:`` section of a phrase catalogue."""
    v = catalog.voice
    return VoiceSettings(name=str(v.get("name", "en-us")), rate=int(v.get("rate", 170)),
                         volume=float(v.get("volume", 1.0)))


@dataclass
class Voice:
    """Everything that makes the moderator speak in one language."""

    synth: Synthesizer
    cache: RenderCache
    settings: VoiceSettings
    speaker: Speaker
    executor: ThreadPoolExecutor | None
    out: PlayedAudio
    """The output, remembering what it played: the reference of echo cancellation."""

    def prerender(self, engine: Engine, schedule: Schedule) -> PrerenderReport:
        """Render what is known before the game starts (another game's engine lists its own: ``setup_phrases``)."""
        own = getattr(engine, "setup_phrases", None)
        texts = own() if own is not None else setup_phrases(engine.catalog, engine.state, schedule)
        return self.cache.prerender(texts, self.settings, timer=time.perf_counter)

    def pump(self) -> None:
        """Play what finished rendering; let the output notice failed devices."""
        self.speaker.pump()
        poll = getattr(self.out, "poll", None)
        if poll is not None:
            poll()

    def alerts(self) -> list[str]:
        """What the host must see: rooms whose speaker has failed."""
        failed = getattr(self.out, "failed_rooms", set())
        return [f"room {room}'s speaker is not working; its announcements are not heard" for room in sorted(failed)]

    def finish(self, timeout: float = LiveTiming.finish_timeout) -> None:
        """Hand everything already announced to the output (the last phrases of a game), in order, and report
        it as spoken: what is still rendering gets ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while self.speaker.rendering and time.monotonic() < deadline:
            self.pump()
            time.sleep(0.01)
        self.pump()
        # Nothing can jump the queue any more: the rest is handed over at once, each after the one before.
        self.speaker.flush()

    def attach(self, engine: Engine) -> None:
        """Speak for ``engine``: its phase decides which answers are stale, and what was heard goes to its event
        log as ``spoken``. A live game calls it again for a game rebuilt from its last save after an internal
        error (``LiveGame.adopt``): the voice must never answer from the engine it replaced."""
        engine.announcer = self.speaker
        self.speaker.context = engine.phase
        self.speaker.on_spoken = lambda spoken: engine.emit(spoken.event())

    def close(self) -> None:
        """Stop the background renderer and the synthesizer."""
        if self.executor is not None:
            self.executor.shutdown(wait=True)
        self.synth.close()


def make_voice(
    engine: Engine,
    out: AudioOut,
    *,
    synth: Synthesizer | None = None,
    cache_dir: Path | None = None,
    live: bool = False,
    timing: LiveTiming | None = None,
    warn: Callable[[str], None] = print,
) -> Voice:
    """Give ``engine`` a voice through ``out``. ``live`` renders unexpected phrases in the background and hands
    each phrase to ``out`` ``timing.speaker_horizon`` before it starts (default ``LiveTiming()``).

    The speaker hands a phrase to ``out`` just before it starts, so someone must call ``Voice.pump()`` as
    the clock moves: the live loop does, and a simulation on a virtual clock does it at the speaker's
    ``next_wake()`` (``moderator.simulate.advance``). What was heard comes back as ``spoken`` events, and
    answers whose moment has passed (``CONTEXTUAL``) are dropped when the engine's phase changed.
    """
    if synth is None:  # the default voice (a command passes its --tts choice, made by its Environment)
        from moderator.adapters.tts import make_synthesizer

        synth = make_synthesizer("auto", warn=warn)
    out = out if isinstance(out, PlayedAudio) else PlayedAudio(out)
    cache = RenderCache(cache_dir or default_cache_dir(), synth)
    settings = voice_settings(engine.catalog)
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="render") if live else None
    speaker = Speaker(
        clock=engine.clock,
        out=out,
        lookup=lambda text: cache.find(text, settings),
        render=lambda text: cache.get(text, settings),
        background=executor,
        # Live: hand phrases to the speakers a little before they start (output latency, loop period).
        horizon=(timing or LiveTiming()).speaker_horizon if live else 0.0,
        warn=warn,
    )
    voice = Voice(synth, cache, settings, speaker, executor, out)
    voice.attach(engine)
    return voice
