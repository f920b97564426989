"""The run's calibrations: what the run's own model earns on the shipped calibration set, once per
language it is asked in (before the first answer's ceiling starts).

- The decline gate's threshold: the model's one-token P(yes) over the set (`gate.calibrate`).
- The speaker decline's margin, from the set's recorded margins (no model asked).
- Which answer checks are on (`decide.switch`): the model's answers to the set as the stage asks
  them, in one batched call a step.

Where `Settings.calibration_cache` names a folder, each calibration is kept there per model, set,
and asks — the gate's scores and the model's replies as read (cleaned and parsed), not the
switches — and the next run of the same model takes it instead of asking again, deciding the
switches anew with the checks of its own code (a CPU reader needs half an hour for 64 prompts;
the contest's run keeps nothing and calibrates once). Nothing here raises out of `ensure` (StopRun
aside): a calibration that fails leaves its decline off and says why.
"""
from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Optional

from . import prompts
from .memory import decide, gate
from .memory.dialogue import Settings
from .memory.embed import Embedder
from .memory.llm import CALIBRATE, LLM, StopRun

log = logging.getLogger("gigamemory")


class Calibrator:
    """Per language: `calibrations` (the gate's, as found), `speaker_calibrations` and
    `speaker_thresholds`, `switches` (the answer checks, the gate's threshold among them, where it
    is on); the dialogue memories share the last two. `llm` is the backend as built (its
    `identity`, which a kept calibration is keyed by, and whether it gives logprobs), `guarded` the
    same behind the run's guard, which the calls go through."""

    def __init__(self, llm: LLM, guarded: LLM, embedder: Embedder, settings: Settings):
        self.llm, self._llm, self.embedder, self.settings = llm, guarded, embedder, settings
        self.calibrations: dict[str, gate.Calibration] = {}
        self.speaker_calibrations: dict[str, gate.Calibration] = {}
        self.speaker_thresholds: dict[str, float] = {}
        self.switches: dict[str, decide.Switches] = {}

    def ensure(self, lang: str) -> None:
        """The calibrations for `lang`, once per run: the gate's threshold (`gate.calibrate`) and the
        checks (`decide.switch`) from this run's own model over the shipped calibration prompts, and
        the speaker margin; where one cannot be made, its decline stays off and the calibration says
        why. Never raises (StopRun aside)."""
        if lang in self.calibrations:
            return
        kept = self._kept(lang)
        if kept is not None and kept.is_file() and self._take_kept(lang, kept):
            pass
        elif self.settings.gate == "kept" and self._calibration_file(lang)[0] is not None:
            self._none_kept(lang, kept)  # none to take: no calibration pass, as with the gate off
        else:  # "kept" without a set for the language asks nothing here either: no set, no check
            replies = self._calibrate_now(lang)
            if kept is not None and self.settings.gate != "kept":
                self._keep(lang, kept, replies)
        try:
            speaker = self._speaker_calibration(lang)
        except Exception as error:  # the speaker decline off; the answers go on
            log.exception("gigamemory: the speaker decline's calibration failed")
            speaker = gate.Calibration(lang, False, f"calibration failed: {type(error).__name__}: {error}")
        self.speaker_calibrations[lang] = speaker
        if speaker.on:
            self.speaker_thresholds[lang] = speaker.threshold
        log.info("gigamemory: speaker decline (%s) %s: %s; threshold %s, AUC %s", lang,
                 "on" if speaker.on else "off", speaker.why, speaker.threshold, speaker.auc)

    def _calibrate_now(self, lang: str) -> Optional[list]:
        """The gate's calibration and the checks', asked of the model now. -> the model's replies to
        the calibration prompts (`_asked`; None where none were asked or the asking failed), to keep."""
        replies = None
        try:
            found = self._calibration(lang)
        except StopRun:
            raise
        except Exception as error:  # a gate that cannot calibrate is off; the answers go on
            log.exception("gigamemory: the decline gate's calibration failed")
            found = gate.Calibration(lang, False, f"calibration failed: {type(error).__name__}: {error}")
        self.calibrations[lang] = found
        log.info("gigamemory: decline gate (%s) %s: %s; threshold %s, AUC %s over %d calls; scores %s",
                 lang, "on" if found.on else "off", found.why, found.threshold, found.auc, found.calls,
                 [[i, a, p] for i, a, p in found.scores])
        try:
            replies = self._asked(lang)
            switches = self._switches(lang, found, replies)
        except StopRun:
            raise
        except Exception as error:  # no calibration, no check earned: the reader's own answers stand
            log.exception("gigamemory: the answer checks' calibration failed")
            switches = decide.Switches(frozenset(), None, {"checks": f"off: calibration failed: "
                                                                     f"{type(error).__name__}: {error}"})
        self._set_switches(lang, switches)
        return replies

    def _none_kept(self, lang: str, kept: Optional[Path]) -> None:
        """`gate="kept"` with a calibration set but no kept calibration to take: the gate off and every
        check on, uncalibrated, as with `gate="off"`; the calibration says why none was taken."""
        if kept is None:
            why = "no calibration_cache to take one from"
        elif kept.is_file():
            why = f"the calibration kept at {kept} is not one this code reads"
        else:
            why = f"no calibration of {self.llm.identity} kept at {kept} (a run with the gate calibrated keeps one)"
        self.calibrations[lang] = gate.Calibration(lang, False, why)
        self._set_switches(lang, decide.Switches(frozenset(decide.CHECKS), None,
                                                 {"checks": f"all on, not calibrated: {why}"}))

    def _set_switches(self, lang: str, switches: decide.Switches) -> None:
        self.switches[lang] = switches
        log.info("gigamemory: answer checks (%s): %s", lang,
                 "; ".join(f"{name} {said}" for name, said in switches.why.items()))

    def _kept(self, lang: str) -> Optional[Path]:
        """Where this model's calibration on this language's set is kept (`kept_path`); None where
        nothing is kept (the contest's run)."""
        path, _ = self._calibration_file(lang)
        if not self.settings.calibration_cache or path is None:
            return None
        return kept_path(Path(self.settings.calibration_cache), self.llm.identity, self.settings, lang, path)

    def _take_kept(self, lang: str, kept: Path) -> bool:
        """The kept gate calibration and replies, the switches decided from those replies now; False
        (nothing taken: the caller calibrates anew and keeps that, or in `kept` mode runs uncalibrated)
        where the file is not one this code keeps — an older form that kept the switches, or a broken one."""
        try:
            data = json.loads(kept.read_text(encoding="utf-8"))
            found = data["gate"]
            found = gate.Calibration(**{**found, "scores": tuple(tuple(s) for s in found["scores"])})
            replies = data["replies"]
            if replies is not None:
                replies = [None if r is None else decide.Reply(r["answer"], tuple(r["quotes"])) for r in replies]
            switches = self._switches(lang, found, replies)
        except StopRun:
            raise
        except Exception as error:  # an older form, a broken file: nothing taken, nothing set
            log.warning("gigamemory: the kept calibration %s is not one this code reads (%s: %s); not taken",
                        kept, type(error).__name__, error)
            return False
        self.calibrations[lang] = found
        self._set_switches(lang, switches)
        log.info("gigamemory: calibration (%s) kept from an earlier run of %s: %s", lang, self.llm.identity, kept)
        return True

    def _keep(self, lang: str, kept: Path, replies: Optional[list]) -> None:
        """The calibration written where the next run of the same model on the same set finds it; a
        failed calibration is not kept (the next run tries again)."""
        found, switches = self.calibrations[lang], self.switches[lang]
        if "calibration failed" in found.why or "calibration failed" in str(switches.why):
            return
        try:
            write_kept(kept, self.llm.identity, self._calibration_file(lang)[0].name, found, replies)
        except OSError:
            log.exception("gigamemory: the calibration could not be kept in %s", kept)

    def _asked(self, lang: str) -> Optional[list]:
        """The model's replies to the calibration prompts as the stage asks them (`decide.replies`,
        batched; a Reply or None each); None where no calibration pass is made
        (the gate off in the config, or no set for the language)."""
        path, _ = self._calibration_file(lang)
        if self.settings.gate == "off" or path is None:
            return None
        items = gate.load_set(path)
        replies, _ = decide.replies(self._llm, [item["messages"] for item in items], lang,
                                    self.settings.answer_max_tokens, CALIBRATE)
        return replies

    def _switches(self, lang: str, found: gate.Calibration, replies: Optional[list]) -> decide.Switches:
        """The checks this run's model earns (`decide.switch`) by its `replies` to the calibration
        prompts (`_asked`), beside the gate's calibration `found`."""
        if self.settings.gate == "off":  # no calibration pass at all: every check on, uncalibrated
            return decide.Switches(frozenset(decide.CHECKS), None,
                                   {"checks": "all on, not calibrated: the gate is off in the config, and with it "
                                              "the calibration pass"})
        path, where = self._calibration_file(lang)
        if path is None or replies is None:
            return decide.Switches(frozenset(), None, {"checks": f"off: no calibration set for {lang!r} in {where}"})
        items = gate.load_set(path)
        p_yes = {i: p for i, _, p in found.scores}
        rows = [decide.Calibrated.of(item, reply, p_yes.get(item["id"])) for item, reply in zip(items, replies)]
        return decide.switch(rows, found.threshold if found.on else None, self.settings.gate_no_answer_share)

    def _calibration_file(self, lang: str):
        """The calibration set for `lang` (gate.calibration_file over the shipped folder and the
        configured one), and where it was looked for."""
        settings = self.settings
        folders = [gate.CALIBRATION_DIR] + ([Path(settings.calibration_dir)] if settings.calibration_dir else [])
        return gate.calibration_file(lang, settings.context_chars, folders), ", ".join(map(str, folders))

    def _speaker_calibration(self, lang: str) -> gate.Calibration:
        settings = self.settings
        if not settings.decline_speaker:
            return gate.Calibration(lang, False, "off in the config")
        path, where = self._calibration_file(lang)
        if path is None:
            return gate.Calibration(lang, False, f"no calibration set for {lang!r} in {where}")
        return gate.speaker_calibration(lang, gate.load_set(path), self.embedder.identity, **gate.rule_of(settings))

    def _calibration(self, lang: str) -> gate.Calibration:
        settings = self.settings
        if settings.gate == "off":
            return gate.Calibration(lang, False, "off in the config")
        if not self.llm.gives_logprobs:
            return gate.Calibration(lang, False, f"the backend {self.llm.name} gives no logprobs")
        path, where = self._calibration_file(lang)
        if path is None:
            return gate.Calibration(lang, False, f"no calibration set for {lang!r} in {where} "
                                                 f"(tools/calibration.py --lang {lang} builds one)")
        items = gate.load_set(path)
        found, _ = gate.read(self._llm, [item["messages"] for item in items], lang, CALIBRATE)
        scores = [(item["id"], bool(item["answerable"]), p) for item, p in zip(items, found)]
        return gate.calibrate(lang, scores, **gate.rule_of(settings))


def kept_path(folder: Path, identity: str, settings: Settings, lang: str, path: Path) -> Path:
    """Where the calibration of the model `identity` (`LLM.identity`) on the set `path` is kept in
    `folder`, named by everything it depends on: the model, the set's bytes, the gate's mode and
    rule, and the asks and schema the model answers (a "kept" run looks for what "calibrated" kept)."""
    mode = "calibrated" if settings.gate == "kept" else settings.gate
    what = json.dumps([identity, path.name, hashlib.sha256(path.read_bytes()).hexdigest(), mode,
                       gate.rule_of(settings), gate.ask(lang), prompts.text("answer", lang, "cite"),
                       decide.CITE_SCHEMA, decide.CITE_MAX_TOKENS, settings.answer_max_tokens], ensure_ascii=False)
    return folder / f"{lang}.{hashlib.sha256(what.encode()).hexdigest()[:16]}.json"


def write_kept(kept: Path, identity: str, set_name: str, found: gate.Calibration, replies: Optional[list]) -> None:
    """A calibration kept: the gate's (`found`, its scores inside) and the model's replies to the set
    (a `decide.Reply` or None each; None: none asked), for `Calibrator` to decide the switches from;
    the model and the set's file name said in it (the file's name is their key's hash)."""
    kept_replies = None if replies is None else [
        None if r is None else {"answer": r.answer, "quotes": list(r.quotes)} for r in replies]
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text(json.dumps({"model": identity, "set": set_name, "gate": found.as_dict(),
                                "replies": kept_replies}, ensure_ascii=False, indent=1), encoding="utf-8")
