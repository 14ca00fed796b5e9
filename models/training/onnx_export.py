"""What the torch trainers share for their ONNX exports: the softmax inside the exported graph."""

from __future__ import annotations

import torch
from torch import nn


class WithSoftmax(nn.Module):
    """Wrap a network that outputs logits (classes on axis 1) so that the exported graph outputs probabilities."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.model(x), dim=1)
