"""The PyTorch reference of s2s (docs/model.md) as a package: model (configuration,
vocabularies, modules), io (model files, batches, parity), train (data through the s2s
binary, training), selftest, cli. scripts/torch_ref.py is its command line."""
