"""A torchvision subset: datasets (MNIST...) and transforms, with no image library needed."""
from . import datasets, transforms

__all__ = ["datasets", "transforms"]
