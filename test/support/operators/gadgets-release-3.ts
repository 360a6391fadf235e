// Release 3 of the gadgets operator: Gadget in v1 only, v1alpha1 dropped.
import { GadgetV1, gadgetOperatorV2 } from './gadgets.js';

export default gadgetOperatorV2(GadgetV1);
