import { soak } from './simulation.soak-support';

soak(0, 2);
