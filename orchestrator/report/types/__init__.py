"""The run report's records, one module per concept: `device_row` (DeviceRow, COLUMNS), `sample_row`
(SampleCell, SampleRow, SAMPLE_FIELDS), `disagreements`, `paired`, `fidelity`, `matrix`, `units` and
`run_report` (RunStamp, RunReport, which holds them all). Import a record from its module; this package
exports nothing (importing one record loads no other concept's module but those it holds)."""
