"""The regex dialects of tokenizer files (Oniguruma, Rust fancy-regex) run with `regex`,
and the time bound on risky patterns."""
