"""How many parameters a decoder-only Transformer has, part by part, from its configuration.

The same arithmetic is in attention_course/widgets/param_count/widget.js (the widget recomputes it when the reader
edits a number); tests/course/test_module06.py checks the two agree and that the presets give the published totals.

Per layer (d = d_model, h = query heads, g = key/value heads, d_h = d / h, f = the FFN's hidden size):

    attention  W_Q d·h·d_h + W_K d·g·d_h + W_V d·g·d_h + W_O h·d_h·d   (+ biases h·d_h + 2·g·d_h + d)
    FFN        GELU MLP: 2·d·f (+ biases f + d);  SwiGLU: 3·d·f (gate, up, down; + biases 2f + d)
    norms      two per layer: LayerNorm 2d (gain and bias), RMSNorm d (gain only)

plus the token embedding V·d, learned position embeddings n_ctx·d (GPT-2/3; none with sinusoidal or RoPE), a
final norm, and the LM head V·d unless it is tied to (is the same matrix as) the token embedding.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

FFN_KINDS = ("gelu", "swiglu")
NORM_KINDS = ("layernorm", "rmsnorm")
POSITION_KINDS = ("learned", "sinusoidal", "rope")


@dataclass(frozen=True)
class DecoderConfig:
    name: str
    vocab_size: int
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    d_ffn: int
    context_length: int
    positions: str = "learned"  # learned | sinusoidal | rope (only learned ones are parameters)
    ffn: str = "gelu"  # gelu (two matrices) | swiglu (three)
    norm: str = "layernorm"  # layernorm (gain + bias) | rmsnorm (gain)
    bias: bool = True  # biases in the attention and FFN projections
    tied_embeddings: bool = True  # the LM head reuses the token embedding matrix
    published: float | None = None  # the total its authors give, in parameters
    source: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


def check_config(cfg: DecoderConfig) -> list[str]:
    """What is wrong with a configuration (empty when it can be counted)."""
    problems = []
    for name in ("vocab_size", "n_layers", "d_model", "n_heads", "n_kv_heads", "d_ffn", "context_length"):
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            problems.append(f"{name} must be a positive integer, got {value!r}")
    if problems:
        return problems
    if cfg.d_model % cfg.n_heads:
        problems.append(f"d_model ({cfg.d_model}) must be divisible by n_heads ({cfg.n_heads})")
    if cfg.n_heads % cfg.n_kv_heads:
        problems.append(f"n_heads ({cfg.n_heads}) must be divisible by n_kv_heads ({cfg.n_kv_heads})")
    if cfg.ffn not in FFN_KINDS:
        problems.append(f"ffn must be one of {', '.join(FFN_KINDS)}, got {cfg.ffn!r}")
    if cfg.norm not in NORM_KINDS:
        problems.append(f"norm must be one of {', '.join(NORM_KINDS)}, got {cfg.norm!r}")
    if cfg.positions not in POSITION_KINDS:
        problems.append(f"positions must be one of {', '.join(POSITION_KINDS)}, got {cfg.positions!r}")
    return problems


def count_parameters(cfg: DecoderConfig) -> dict[str, int]:
    """The parameters of each part and the total (exact integers):
    embeddings (token + learned positions), attention, mlp, norms (all layers and the final one), lm_head
    (0 when tied), total; and per layer: attention_per_layer, mlp_per_layer, norms_per_layer."""
    problems = check_config(cfg)
    if problems:
        raise ValueError("; ".join(problems))
    d, f, dh = cfg.d_model, cfg.d_ffn, cfg.head_dim
    q_width, kv_width = cfg.n_heads * dh, cfg.n_kv_heads * dh
    attention = d * q_width + 2 * d * kv_width + q_width * d
    mlp = (3 if cfg.ffn == "swiglu" else 2) * d * f
    if cfg.bias:
        attention += q_width + 2 * kv_width + d
        mlp += (2 * f if cfg.ffn == "swiglu" else f) + d
    one_norm = 2 * d if cfg.norm == "layernorm" else d
    token = cfg.vocab_size * d
    positions = cfg.context_length * d if cfg.positions == "learned" else 0
    lm_head = 0 if cfg.tied_embeddings else cfg.vocab_size * d
    parts = {
        "token_embedding": token,
        "position_embedding": positions,
        "embeddings": token + positions,
        "attention": cfg.n_layers * attention,
        "mlp": cfg.n_layers * mlp,
        "norms": cfg.n_layers * 2 * one_norm + one_norm,
        "lm_head": lm_head,
        "attention_per_layer": attention,
        "mlp_per_layer": mlp,
        "norms_per_layer": 2 * one_norm,
    }
    parts["total"] = parts["embeddings"] + parts["attention"] + parts["mlp"] + parts["norms"] + lm_head
    return parts


# The presets. Sources (the published sizes and totals):
# * GPT-2 small — Radford et al. 2019, "Language Models are Unsupervised Multitask Learners" (Table 2: 12 layers,
#   d_model 768) and the released config (huggingface.co/openai-community/gpt2, config.json: vocab_size 50257,
#   n_positions 1024, n_embd 768, n_layer 12, n_head 12, n_inner null = 4·768, tied LM head). The paper's table
#   says 117M; the released checkpoint has 124,439,808 parameters (its model card says "124M"), which is what
#   this count gives, so the preset's published total is the checkpoint's 124M.
# * GPT-3 175B — Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1: n_layers 96, d_model
#   12288, n_heads 96, d_head 128, context 2048, total 175.0B; §2.1: the GPT-2 architecture, d_ff = 4·d_model,
#   the GPT-2 tokenizer (vocabulary 50257). (Its alternating sparse attention changes no parameter count.)
# * SmolLM2-135M — Allal et al. 2025, "SmolLM2: When Smol Goes Big" and its config
#   (huggingface.co/HuggingFaceTB/SmolLM2-135M, config.json: vocab_size 49152, hidden_size 576, num_hidden_layers
#   30, num_attention_heads 9, num_key_value_heads 3, intermediate_size 1536, tie_word_embeddings true,
#   max_position_embeddings 8192, rope_theta 100000, LlamaForCausalLM: RMSNorm, SwiGLU, no biases). The same
#   sizes are in the GGUF the course runs (tests/course/test_module06_model.py reads them from its metadata).
PRESETS: dict[str, DecoderConfig] = {
    "gpt2-small": DecoderConfig(
        "GPT-2 small",
        vocab_size=50257,
        n_layers=12,
        d_model=768,
        n_heads=12,
        n_kv_heads=12,
        d_ffn=3072,
        context_length=1024,
        positions="learned",
        ffn="gelu",
        norm="layernorm",
        bias=True,
        tied_embeddings=True,
        published=124e6,
        source="Radford et al. 2019；Hugging Face openai-community/gpt2 的 config.json",
    ),
    "gpt3-175b": DecoderConfig(
        "GPT-3 175B",
        vocab_size=50257,
        n_layers=96,
        d_model=12288,
        n_heads=96,
        n_kv_heads=96,
        d_ffn=4 * 12288,
        context_length=2048,
        positions="learned",
        ffn="gelu",
        norm="layernorm",
        bias=True,
        tied_embeddings=True,
        published=175.0e9,
        source="Brown et al. 2020，表 2.1",
    ),
    "smollm2-135m": DecoderConfig(
        "SmolLM2-135M",
        vocab_size=49152,
        n_layers=30,
        d_model=576,
        n_heads=9,
        n_kv_heads=3,
        d_ffn=1536,
        context_length=8192,
        positions="rope",
        ffn="swiglu",
        norm="rmsnorm",
        bias=False,
        tied_embeddings=True,
        published=135e6,
        source="Hugging Face HuggingFaceTB/SmolLM2-135M 的 config.json；本站所用 GGUF 的元数据",
    ),
}


def config_dict(cfg: DecoderConfig) -> dict:
    out = asdict(cfg)
    out["notes"] = list(cfg.notes)
    return out


__all__ = [
    "DecoderConfig",
    "FFN_KINDS",
    "NORM_KINDS",
    "POSITION_KINDS",
    "PRESETS",
    "check_config",
    "config_dict",
    "count_parameters",
]
