"""FakeData: random images and labels, the same for the same index, for trying a pipeline offline."""
import numpy as np

from ...data.dataset import Dataset
from ...ops.creation import from_numpy


class FakeData(Dataset):
    """``size`` random images of ``image_size`` (C, H, W) with labels in ``range(num_classes)``.

    Item ``i`` is the same every time it is read (seeded by ``i + random_offset``). An image is a
    uint8 (H, W, C) tensor ((H, W) when C is 1), like the other vision datasets' items, so
    ``transforms.ToTensor()`` gives a float (C, H, W).

    Example:
        >>> img, label = FakeData(size=4, image_size=(3, 8, 8))[2]
        >>> tuple(img.shape), 0 <= label < 10
        ((8, 8, 3), True)
    """

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        if len(image_size) != 3:
            raise ValueError(f"FakeData: image_size must be (C, H, W), got {image_size}")
        self.size, self.image_size, self.num_classes = int(size), tuple(image_size), num_classes
        self.transform, self.target_transform = transform, target_transform
        self.random_offset = random_offset

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if not -self.size <= index < self.size:
            raise IndexError(f"FakeData: index {index} is out of range for {self.size} items")
        index %= self.size
        rng = np.random.Generator(np.random.PCG64(index + self.random_offset))
        c, h, w = self.image_size
        img = rng.integers(0, 256, size=(h, w, c), dtype=np.uint8)
        img = from_numpy(img[:, :, 0] if c == 1 else img)
        target = int(rng.integers(0, self.num_classes))
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target
