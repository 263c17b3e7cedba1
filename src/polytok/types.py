"""Type aliases for the domain's integers."""

TokenId = int
Rank = int
