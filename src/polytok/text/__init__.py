"""Text as the reference engines see it: character predicates, Unicode tables,
normalization forms, the byte alphabet."""
