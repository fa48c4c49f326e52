package dev.staunch.bench.jmh_generated;
public class GetSelectClose_StaunchJdbcState_jmhType extends GetSelectClose_StaunchJdbcState_jmhType_B3 {
}

