"""Training: new vocabularies from a corpus, as the reference trainers build them.

Counting (``word_counts``), one trainer per model kind (``bpe_trainer``, ``wordpiece_trainer``,
``word_level_trainer``, ``unigram_trainer``) and the pipeline glue that turns a trained model
into a tokenizer (``pipeline``). Import the module you need; this package imports nothing.
"""
