#!/usr/bin/env python
"""A small GAN on FakeData with fully connected nets, in the spirit of pytorch/examples' dcgan."""
import argparse

import torch
import torch.nn as nn
import torch.optim as optim
import torchvision.datasets as dset
import torchvision.transforms as transforms

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=16)
parser.add_argument("--image-size", type=int, default=16)
parser.add_argument("--nz", type=int, default=8)
parser.add_argument("--niter", type=int, default=1)
parser.add_argument("--dry-run", action="store_true")
parser.add_argument("--seed", type=int, default=7)
args = parser.parse_args()
torch.manual_seed(args.seed)
device = torch.device("cpu")

dataset = dset.FakeData(size=64, image_size=(1, args.image_size, args.image_size),
                        transform=transforms.Compose([transforms.ToTensor(),
                                                      transforms.Normalize((0.5,), (0.5,))]))
loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True)
npix = args.image_size * args.image_size

netG = nn.Sequential(nn.Linear(args.nz, 64), nn.ReLU(True), nn.Linear(64, npix), nn.Tanh()).to(device)
netD = nn.Sequential(nn.Linear(npix, 64), nn.LeakyReLU(0.2, inplace=True), nn.Linear(64, 1),
                     nn.Sigmoid()).to(device)
criterion = nn.BCELoss()
fixed_noise = torch.randn(args.batch_size, args.nz, device=device)
real_label, fake_label = 1.0, 0.0
optimizerD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))

for epoch in range(args.niter):
    for i, (data, _) in enumerate(loader, 0):
        netD.zero_grad()
        real = data.to(device).view(data.size(0), -1)
        b = real.size(0)
        label = torch.full((b,), real_label, dtype=real.dtype, device=device)
        errD_real = criterion(netD(real).view(-1), label)
        errD_real.backward()
        D_x = netD(real).mean().item()
        noise = torch.randn(b, args.nz, device=device)
        fake = netG(noise)
        label.fill_(fake_label)
        errD_fake = criterion(netD(fake.detach()).view(-1), label)
        errD_fake.backward()
        errD = errD_real + errD_fake
        optimizerD.step()
        netG.zero_grad()
        label.fill_(real_label)
        errG = criterion(netD(fake).view(-1), label)
        errG.backward()
        optimizerG.step()
        print(f"[{epoch}/{args.niter}][{i}/{len(loader)}] Loss_D: {errD.item():.4f} "
              f"Loss_G: {errG.item():.4f} D(x): {D_x:.4f}")
        if args.dry_run:
            break
    with torch.no_grad():
        print("fixed sample", tuple(netG(fixed_noise).shape))
