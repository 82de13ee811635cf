"""Datasets in ``torchvision.datasets``'s shape: files in their standard layout under ``root``."""
from .cifar import CIFAR10
from .fake import FakeData
from .mnist import MNIST, FashionMNIST

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "FakeData"]
