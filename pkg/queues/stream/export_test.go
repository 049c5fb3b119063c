package stream

// Slot is slot, for the tests that compare it with CLUSTER KEYSLOT.
var Slot = slot
