"""The language-model half: a byte-level BPE tokenizer, a tiny Llama, and canned-answer training.

Build-time only (needs torch, transformers, tokenizers). Everything is seeded so a rebuild gives
the same weights on the same library versions.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from .canned import AUDIO_TAG, CANNED, IMAGE_TAG, SPECIALS, TEMPLATE_MM, Canned, render, user_text

VOCAB_SIZE = 512
HIDDEN = 64
IMAGE_SLOTS = 16
AUDIO_SLOTS_MAX = 64  # the runtime may pass fewer audio embeddings for a short clip


def corpus_lines(limit_bytes: int = 3_000_000) -> list[str]:
    """English-ish text that is on every build machine: the stdlib's own sources, in sorted order."""
    stdlib = Path(sys.base_prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    lines: list[str] = []
    size = 0
    for path in sorted(stdlib.glob("*.py")):
        text = path.read_text(encoding="utf-8", errors="ignore")
        lines.extend(text.splitlines())
        size += len(text)
        if size >= limit_bytes:
            break
    # The canned phrases, so their words become whole tokens and answers stay short.
    for c in CANNED:
        for _ in range(1000):
            lines.append(c.prompt)
            lines.append(c.answer)
            if c.history:
                lines.extend(c.history)
    return lines


def train_tokenizer(out_dir: Path) -> PreTrainedTokenizerFast:
    """Byte-level BPE (vocab 512) with ChatML specials and the multimodal chat template."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus_lines(), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
    )
    fast.chat_template = TEMPLATE_MM
    fast.save_pretrained(out_dir)
    return fast


def make_config(
    tok: PreTrainedTokenizerFast, max_positions: int, *, dynamic_context: bool = False
) -> LlamaConfig:
    """hidden 64, 2 layers, 4 heads / 2 KV heads, SiLU MLP, tied embeddings, eos <|im_end|>.

    dynamic_context (litert-torch 0.10.0's dynamic-shape export): 4 KV heads and a GELU MLP. With
    grouped KV heads the trace fails (`Constraints violated (prefill_length)`: a guard
    `L*Min(16, 32*L) == 16*L` it cannot prove), and SiLU/sigmoid is lowered through JAX, which has
    no dynamic dimensions (`AssertionError: float32[1,-9223372036854775808,256]`); GELU has a
    TFLite lowering.
    """
    return LlamaConfig(
        vocab_size=len(tok),
        hidden_size=HIDDEN,
        intermediate_size=4 * HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4 if dynamic_context else 2,
        hidden_act="gelu" if dynamic_context else "silu",
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        bos_token_id=tok.convert_tokens_to_ids("<|endoftext|>"),
        eos_token_id=tok.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=tok.convert_tokens_to_ids("<|endoftext|>"),
        rope_theta=10000.0,
        torch_dtype="float32",
    )


@dataclass(frozen=True)
class Example:
    """One training sequence: ids with -1 where a media embedding goes, and a loss mask."""

    ids: list[int]
    learn: list[bool]
    media: str | None


def _encode_segments(tok: PreTrainedTokenizerFast, text: str, slots: int) -> list[int]:
    """Tokenize like the runtime: split at media tags, encode the pieces, splice slot markers."""
    out: list[int] = []
    for i, piece in enumerate(text.replace(AUDIO_TAG, IMAGE_TAG).split(IMAGE_TAG)):
        if i:
            out.extend([-1] * slots)
        out.extend(tok.encode(piece, add_special_tokens=False))
    return out


def examples(tok: PreTrainedTokenizerFast, c: Canned, slots: int) -> list[Example]:
    """Training sequences for a canned pair (two for a two-turn pair: stop token kept or not)."""
    turns: list[tuple[str, str]] = []
    variants: list[list[tuple[str, bool]]] = [[]]
    if c.history:
        first = render([("user", c.history[0])], generation_prompt=True)
        variants = [
            [(first, False), (c.history[1] + "<|im_end|>", True), (sep, False)]
            for sep in ("\n", "<|im_end|>\n")  # the runtime may or may not re-feed the stop token
        ]
    turns.append(("user", user_text(c)))
    prompt = render(turns, generation_prompt=True)
    out = []
    for head in variants:
        ids: list[int] = []
        learn: list[bool] = []
        for text, is_answer in [*head, (prompt, False), (c.answer + "<|im_end|>", True)]:
            piece = _encode_segments(tok, text, slots)
            ids.extend(piece)
            learn.extend([is_answer] * len(piece))
        out.append(Example(ids, learn, c.media))
    return out


def _slot_vectors(kind: str, n: int, rng: torch.Generator, encoders) -> torch.Tensor:
    """What the runtime may splice in: zeros, or real adapter output for random media."""
    pick = int(torch.randint(0, 3, (1,), generator=rng))
    if pick == 0:
        return torch.zeros(n, HIDDEN)
    with torch.no_grad():
        if kind == "image":
            img = torch.rand(1, 32, 32, 3, generator=rng) * (255.0 if pick == 2 else 1.0)
            return encoders.vision_adapter(encoders.vision_encoder(img))[0]
        mel = torch.randn(1, AUDIO_SLOTS_MAX, 16, generator=rng) * (4.0 if pick == 2 else 1.0)
        mask = torch.ones(1, AUDIO_SLOTS_MAX, dtype=torch.bool)
        feats, fmask = encoders.audio_encoder(mel, mask)
        vecs = encoders.audio_adapter(fmask, feats)[0]
        return vecs.repeat((n + len(vecs) - 1) // len(vecs), 1)[:n]


def train(model: LlamaForCausalLM, tok: PreTrainedTokenizerFast, encoders, *, steps: int, seed: int) -> float:
    """Memorize the canned pairs; media slots get zero or real-encoder embeddings each step."""
    torch.manual_seed(seed)
    rng = torch.Generator().manual_seed(seed)
    pyrng = random.Random(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    embed = model.get_input_embeddings()
    model.train()
    loss_value = 0.0
    for _ in range(steps):
        batch = []
        for c in CANNED:
            if c.media == "image":
                slots = IMAGE_SLOTS
            elif c.media == "audio":
                slots = pyrng.randint(1, AUDIO_SLOTS_MAX)
            else:
                slots = 0
            batch.extend(examples(tok, c, slots))
        total = torch.zeros(())
        for ex in batch:
            ids = torch.tensor([max(i, 0) for i in ex.ids])
            x = embed(ids)
            slot_pos = [i for i, t in enumerate(ex.ids) if t < 0]
            if slot_pos:
                vecs = _slot_vectors(ex.media, len(slot_pos), rng, encoders)
                x = x.clone()
                x[slot_pos] = vecs
            labels = torch.tensor([t if learn else -100 for t, learn in zip(ex.ids, ex.learn)])
            out = model(inputs_embeds=x[None], labels=labels[None])
            total = total + out.loss
        loss = total / len(batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss_value = float(loss)
    model.eval()
    return loss_value


def greedy_check(model: LlamaForCausalLM, tok: PreTrainedTokenizerFast) -> list[str]:
    """Greedy answers in torch (zero media embeddings), to fail the build before export."""
    embed = model.get_input_embeddings()
    stop = tok.convert_tokens_to_ids("<|im_end|>")
    answers = []
    for c in CANNED:
        ex = examples(tok, c, IMAGE_SLOTS if c.media else 0)[0]
        cut = len(ex.ids) - ex.learn[::-1].index(False)  # up to the generation prompt
        ids = ex.ids[:cut]
        got: list[int] = []
        with torch.no_grad():
            for _ in range(12):
                x = embed(torch.tensor([max(i, 0) for i in ids + got])).clone()
                x[[i for i, t in enumerate(ids) if t < 0]] = 0.0
                nxt = int(model(inputs_embeds=x[None]).logits[0, -1].argmax())
                if nxt == stop:
                    break
                got.append(nxt)
        answers.append(tok.decode(got))
    return answers
