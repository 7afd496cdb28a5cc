"""Decoders and search over hashed output spaces (MultiHashFormer's cascaded predictor, Superbloom's beam search)."""
