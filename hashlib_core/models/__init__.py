"""Hugging Face-style models (``PretrainedConfig`` / ``PreTrainedModel`` subclasses), one submodule per paper."""
