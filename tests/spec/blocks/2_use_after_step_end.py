x = torch.randn(3)
torch.step_end()
try:
    x.sum()
except torch.NcError as e:
    print("에러:", e)
