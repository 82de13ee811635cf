"""A torchvision subset: datasets, transforms and image utilities, with no image library needed."""
from . import datasets, transforms, utils

__all__ = ["datasets", "transforms", "utils"]
