"""The demo's evidence, visibly synthetic: per prompt a text and checklist items (each prompt
its own string-seeded stream), the judge's reasons from its scores, per model and search type a
small PNG."""

from __future__ import annotations

import colorsys
import functools
import io
import random

#: Per prompt kind: its sentence ({task}: task type, {subject}: first domain, {word}: invented).
TEMPLATES = {
    "nosearch": "{task} of an everyday scene about {subject}; nothing to look up.",
    "nosearch_text": '{task} about {subject} with the words "{word}" in clear letters.',
    "textual": '{task} on {subject} that spells the invented title "{word}" exactly.',
    "visual": '{task} of the invented {subject} landmark "{word}" as its reference shows it.',
}
CHECKS = (
    "The main subject named in the prompt is present",
    "The requested style is followed",
    "Every named object appears once",
    "The text is spelled as given",
    "The colours match the description",
    "The scene is physically plausible",
    "The layout follows the requested arrangement",
    "The subject's proportions are right",
    "No object the prompt excludes appears",
    "The lighting matches the time of day",
    "The reference's distinctive details are kept",
    "The background fits the setting",
)
_SYLLABLES = ("ka", "lo", "mi", "ren", "su", "tor", "vel", "zan", "qui", "do", "bra", "nyx")


def prompt_evidence(
    seed: str, sample_id: str, kind: str, task: str, subject: str, n_checklist: int
) -> tuple[str, tuple[str, ...]]:
    """``(user_prompt, checklist item texts)`` of one demo prompt."""
    rng = random.Random(f"{seed}:evidence:{sample_id}")
    word = "".join(rng.choice(_SYLLABLES) for _ in range(3)).capitalize()
    said = TEMPLATES[kind].format(task=task.capitalize(), subject=subject, word=word)
    text = "[synthetic demo] " + said
    return text, tuple(rng.sample(CHECKS, n_checklist))


#: A judge's verdict by score (raw 0–3): the lowest score each verdict starts at.
VERDICTS = ((3.0, "fully met"), (2.0, "mostly met"), (1.0, "partly met"), (0.0, "not met"))


def judge_reason(score: float | None, what: str) -> str:
    """The demo judge's reason for ``score`` (raw 0–3, None: not applicable) on ``what``."""
    if score is None:
        return f"[synthetic demo] Not applicable: {what} does not apply to this prompt."
    verdict = next(v for low, v in VERDICTS if score >= low)
    return f"[synthetic demo] {verdict.capitalize()} ({score:g}/3): {what}."


def initials(name: str) -> str:
    """Up to two capitals of a display name ("Pixelwright 2" → "P2")."""
    return "".join(w[0] for w in name.replace("-", " ").split()[:2]).upper()


@functools.cache
def image_png(hue: float, label: str, band: str) -> bytes:
    """A 64×64 palette PNG (about 250 bytes): eight bands of one hue, ``label``, DEMO, ``band``."""
    from PIL import Image, ImageDraw, ImageFont

    im = Image.new("P", (64, 64))
    palette = []
    for i in range(8):
        rgb = colorsys.hsv_to_rgb(hue, 0.35 + 0.08 * i, 0.95 - 0.07 * i)
        palette += [round(c * 255) for c in rgb]
    im.putpalette(palette + [255, 255, 255])
    draw, font = ImageDraw.Draw(im), ImageFont.load_default_imagefont()
    for i in range(8):
        draw.rectangle([0, i * 8, 63, i * 8 + 7], fill=i)
    for y, text in ((10, label), (26, "DEMO"), (42, band)):
        draw.text((6, y), text, fill=8, font=font)
    buf = io.BytesIO()
    im.save(buf, "PNG", optimize=True)
    return buf.getvalue()
