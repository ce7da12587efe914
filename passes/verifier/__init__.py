"""The device-isolation verifier's parts (the pass is
device_isolation_verifier.py).

- facts.py: what is known of a value's origin (device, allocator, command
  buffer, buffer, fence);
- hal_transfer.py, hal_bits.py: what each HAL op says about the owner of
  what it makes;
- ownership.py: the analysis, once over the module;
- access.py: which device may use which memory (the memory model);
- rule.py: what a rule is; module_rules.py, memory_rules.py,
  fence_rules.py, abi_rules.py: the rules; rules.py: their order.
"""
