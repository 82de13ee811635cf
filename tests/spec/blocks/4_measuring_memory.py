torch.default_context().reset_peak()
with torch.no_grad():
    y = model(torch.randn(256, 4))
stats = torch.mem_stats()
print({k: v for k, v in stats.items()})
torch.step_end()
