"""Datasets in ``torchvision.datasets``'s shape: files in their standard layout under ``root``."""
from .mnist import MNIST, FashionMNIST

__all__ = ["MNIST", "FashionMNIST"]
