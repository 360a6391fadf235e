// Release 2 of the gadgets operator: Gadget stored in v1, v1alpha1 converted.
import { gadgetOperatorV2 } from './gadgets.js';

export default gadgetOperatorV2();
