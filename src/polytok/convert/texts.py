"""The edge texts `polytok.convert.check` reads every converted GGUF back on, and those of the proof.

A few dozen short texts that a wrong vocabulary, a missing merge list, a wrong
pre-tokenizer or a wrong special-token table would tokenize differently: runs of
spaces, tabs and line breaks, digits, punctuation and contractions, code, emoji
sequences, several scripts, precomposed and decomposed accents, and the special
markers of the common model families. Each is named as in the shared edge-text
table the llama.cpp goldens were made from (tests/golden/convert rows), so a test
can hold each text's known differences to llama.cpp's own output.

`PROOF_TEXTS`, what ``polytok convert``'s proof (`polytok.convert.proof`) runs
both engines on, are those and more of each kind: the empty text, longer runs of
spaces and line breaks, Unicode spaces and a byte-order mark, control characters,
more code and markup, longer CJK, keycap and flag emoji, mathematical letters,
markers glued to words and to each other.
"""

from __future__ import annotations

__all__ = ["CHECK_TEXTS", "PROOF_TEXTS"]

CHECK_TEXTS: tuple[tuple[str, str], ...] = (
    ("whitespace-001", " "),
    ("whitespace-005", "\n"),
    ("whitespace-009", " \n "),
    ("whitespace-011", "  leading two spaces"),
    ("whitespace-014", "double  space  between  words"),
    ("whitespace-015", "tab\tseparated\tvalues"),
    ("whitespace-017", "line one\r\nline two\r\nline three\r\n"),
    ("whitespace-023", "                 x"),
    ("whitespace-026", "word\n\n\n\nword"),
    ("numbers-002", "1234567890"),
    ("numbers-004", "1,000,000.00"),
    ("numbers-009", "2024-01-31T23:59:59Z"),
    ("numbers-011", "+1 (555) 123-4567"),
    ("numbers-014", "9" * 64),
    ("numbers-015", "١٢٣٤٥ Arabic-Indic digits"),
    ("numbers-020", "$1,234.56 €99,99 £5 ¥1000 ₹500"),
    ("punctuation-001", "Hello, world!"),
    ("punctuation-003", "!!!???!!!"),
    ("punctuation-005", "«quoted» “curly” ‘single’ „low“"),
    ("punctuation-009", "don't won't can't I'm you're we've they'll he'd"),
    ("punctuation-010", "DON'T WON'T I'M YOU'RE"),
    ("punctuation-012", "C'est l'été, n'est-ce pas ?"),
    ("punctuation-016", "。、「」『』！？"),
    ("code-001", "def add(a, b):\n    return a + b\n"),
    # over 50 tokens: past the truncation of GPT-2's tokenizer.json, which llama.cpp does not have
    ("code-002", 'class Foo(Base):\n    """Docstring."""\n\n    def __init__(self, x: int = 0) -> None:\n'
                 "        self.x = x  # comment\n"),
    ("code-003", "for (let i = 0; i < n; i++) {\n\tconsole.log(`item ${i}`);\n}"),
    ("code-013", "key: value\nlist:\n  - one\n  - two\nmulti: |\n  line1\n  line2\n"),
    ("emoji-002", "Hello 👋 world 🌍!"),
    ("emoji-003", "👨\u200d👩\u200d👧\u200d👦"),
    ("emoji-005", "👍\U0001f3fb👍\U0001f3fc👍\U0001f3fd👍\U0001f3fe👍\U0001f3ff"),
    ("emoji-006", "🇺🇸🇯🇵🇫🇷"),
    ("emoji-013", "emoji🙂glued🙃to🙂text"),
    ("combining-006", "Tiếng Việt có dấu"),
    ("nfc_nfd-001", "café"),
    ("nfc_nfd-002", "cafe\u0301"),
    ("nfc_nfd-003", "naïve résumé"),
    ("scripts-001", "안녕하세요, 세계!"),
    ("scripts-003", "你好，世界！"),
    ("scripts-005", "こんにちは、世界。カタカナ ひらがな"),
    ("scripts-007", "สว\u0e31สด\u0e35คร\u0e31บ ย\u0e34นด\u0e35ต\u0e49อนร\u0e31บ"),
    ("scripts-008", "नमस\u094dत\u0947 द\u0941न\u093fय\u093e"),
    ("scripts-011", "مرحبا بالعالم"),
    ("scripts-014", "Привет, мир!"),
    ("scripts-016", "Γειά σου Κόσμε ά έ ή"),
    ("scripts-027", "English مع العربية mixed"),
    ("long_repeat-003", "Pneumonoultramicroscopicsilicovolcanoconiosis"),
    ("special_markers-001", "<s>"),
    ("special_markers-003", "<s> hello </s>"),
    ("special_markers-004", "Use <|endoftext|> to stop."),
    ("special_markers-005", "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"),
    ("special_markers-006", "[CLS] sentence one [SEP] sentence two [SEP]"),
    ("special_markers-008", "<unk> <pad> <mask>"),
    ("special_markers-009", "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"),
    ("special_markers-015", "literal <0x0A> and <0x20> and <0xFF>"),
    ("special_markers-016", "\u2581metaspace\u2581char and \u0120byte \u010alevel chars"),
    ("special_markers-017", "##ing ##s wordpiece prefix"),
    ("special_markers-022", "<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>"),
    ("mixed-001", "Email me at john.doe+tag@example.co.uk or visit https://www.example.com/a?b=c#d"),
    ("mixed-010", "The quick brown fox jumps over the lazy dog."),
    ("mixed-012", "camelCaseIdentifier snake_case_name kebab-case-name SCREAMING_SNAKE"),
    ("mixed-013", "Mr. O'Neil's 3rd-floor apt. #4B"),
)

PROOF_TEXTS: tuple[tuple[str, str], ...] = CHECK_TEXTS + (
    ("proof-empty", ""),
    ("proof-space-run", "a" + " " * 40 + "b"),
    ("proof-line-breaks", "\n\n\n \n\t\n  \r\n\r\r\n"),
    ("proof-trailing-spaces", "trailing spaces   "),
    ("proof-unicode-spaces", "nbsp\u00a0thin\u2009ideographic\u3000zero\u200bwidth end"),
    ("proof-bom", "\ufeffbyte-order mark first"),
    ("proof-control-chars", "bell\x07 escape\x1b[0m delete\x7f"),
    ("proof-long-word", "a" * 120),
    ("proof-long-number", "3.14159265358979323846264338327950288419716939937510"),
    ("proof-case", "HeLLo WoRLD ÀÉÎÕÜ àéîõü ß ẞ İı"),
    ("proof-code-rust", "fn main() {\n    let v: Vec<u8> = vec![0xFF, 0x00];\n    println!(\"{:?}\", v);\n}\n"),
    ("proof-code-json", '{"key": [1, 2.5e-3, null, true], "nested": {"a": "b"}}'),
    ("proof-markup", '<div class="x">&amp; &lt;tag&gt;</div>\n# Title\n\n- **bold** _it_ `code`\n'),
    ("proof-cjk-long", "我们今天在北京大学的图书馆里读书，然后一起去吃午饭。"),
    ("proof-japanese-numbers", "東京タワーは333メートルです。"),
    ("proof-korean-code", "변수명 = 'ㄱㄴㄷ'  # 주석"),
    ("proof-emoji-sequences", "🏳\ufe0f\u200d🌈 and ❤\ufe0f heart, 1\ufe0f\u20e3 keycap"),
    ("proof-math", "∀x∈ℝ: x² ≥ 0 ⇒ √(x²) = |x|  𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛"),
    ("proof-rare-scripts", "ሰላም ᓀᐦᐃᔭᐍᐏᐣ 𐌰𐌱𐌲"),
    ("proof-markers-glued", "text<|endoftext|>text</s><s>[SEP][CLS]<pad>"),
    ("proof-markers-spaced", " <|im_end|> \n<|eot_id|>\n[INST] hi [/INST]"),
)
